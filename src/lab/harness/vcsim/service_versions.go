package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
)

// /sdk/vimServiceVersions.xml as a real server writes it: its own urn:vim25 version, then every
// earlier version it still serves, newest first. vcsim 0.24 prints its apiVersion followed by a
// fixed "6.0, 5.5" — so a 5.5 profile would claim to speak 6.0, and a client negotiating the
// highest common version (pyVim.connect __FindSupportedVersion) would pick one the server does not
// know. The ladder is the one a real vCenter 8.0.3 serves (recorded: test/fixtures/vcenter-soap/
// vcenter-8.0.3/*/00-GET-vimServiceVersions.xml, current version uA046D008), plus 8.0.3.0.
var vimVersionLadder = []string{
	"8.0.3.0", "8.0.2.0", "8.0.1.0", "8.0.0.2", "8.0.0.1", "8.0.0.0",
	"7.0.3.2", "7.0.3.1", "7.0.3.0", "7.0.2.1", "7.0.2.0", "7.0.1.1", "7.0.1.0", "7.0.0.2", "7.0.0.0",
	"6.9.1", "6.8.7", "6.7.3", "6.7.2", "6.7.1", "6.7", "6.5", "6.0", "5.5", "5.1", "5.0", "4.1", "4.0",
}

func serveVimServiceVersions(w http.ResponseWriter) {
	current := "6.5"
	if si, ok := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance); ok && si.Content.About.ApiVersion != "" {
		current = si.Content.About.ApiVersion
	}
	var prior []string
	for i, v := range vimVersionLadder {
		if v == current {
			prior = vimVersionLadder[i+1:]
			break
		}
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" ?><namespaces version="1.0"><namespace><name>urn:vim25</name>`)
	fmt.Fprintf(&b, "<version>%s</version><priorVersions>", current)
	for _, v := range prior {
		fmt.Fprintf(&b, "<version>%s</version>", v)
	}
	b.WriteString("</priorVersions></namespace></namespaces>")
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(b.String()))
}
