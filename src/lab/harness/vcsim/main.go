// Command vcsim-harness runs govmomi's vCenter/ESXi simulator (0.24) over TLS with the storage
// methods a benchmark toolkit needs (VMFS datastores on naa.* LUNs, RDM backings, property
// collector paging) and a small fault-injection API under /_harness/. See README.md.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
)

type readyLine struct {
	URL        string `json:"url"`
	Thumbprint string `json:"thumbprint"`
	CertFile   string `json:"certFile"`
	Username   string `json:"username"`
	Pid        int    `json:"pid"`
	APIType    string `json:"apiType"`
	DataDir    string `json:"dataDir"`
	Version    string `json:"version"`
}

func main() {
	esx := flag.Bool("esx", false, "simulate a standalone ESXi host instead of a vCenter")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	certDir := flag.String("certdir", "", "directory for the generated cert.pem/key.pem (default: a temp dir)")
	dataDir := flag.String("datadir", "", "directory for datastore contents (default: a temp dir, removed on exit)")
	username := flag.String("username", "user", "the only user name Login accepts")
	passwordFile := flag.String("password-file", "", "file holding the only password Login accepts (default: $"+passwordEnv+", else \"pass\")")
	idle := flag.Duration("session-idle-timeout", 0, "invalidate sessions idle longer than this (0 = never)")
	trace := flag.Bool("trace", false, "dump SOAP traffic to stderr")
	version := flag.String("version", "8.0", "vSphere release to simulate: "+profileNames()+" (version.go)")
	// vcsim's own model flags (govmomi vcsim/main.go): -host is hosts per cluster,
	// -standalone-host hosts outside any cluster, -vm VMs per resource pool / standalone host.
	counts := modelCounts{}
	flag.IntVar(&counts.cluster, "cluster", -1, "clusters per datacenter (default: the model's, 1)")
	flag.IntVar(&counts.clusterHost, "host", -1, "hosts per cluster (default: the model's, 3)")
	flag.IntVar(&counts.standaloneHost, "standalone-host", -1, "standalone hosts per datacenter (default: the model's, 1)")
	flag.IntVar(&counts.vm, "vm", -1, "VMs per resource pool and standalone host (default: the model's, 2)")
	guestDir := flag.String("guest-disks", "", "give this machine (the lab's guest) a loop device per attached disk, linked as DIR/by-id/wwn-0x<id> (guestdisks.go); needs root")
	guestOpsFile := flag.String("guest-ops", "", "JSON file configuring lab guests for guest operations (guestops.go): {\"vms\":[{\"vm\",\"os\",\"username\",\"password\"}]}; a Linux guest needs root")
	standins := flag.String("windows-standins", "", "directory of the Windows stand-ins (default: ../windows beside this binary's source, src/lab/harness/windows)")
	flag.Parse()

	log.SetPrefix("vcsim-harness: ")
	p, ok := versionProfiles[*version]
	if !ok {
		log.Fatalf("-version %q: expected one of %s", *version, profileNames())
	}
	labProfile = p
	password, err := readPassword(*passwordFile)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(*esx, counts, *listen, *certDir, *dataDir, *username, password, *idle, *trace, *guestDir, *guestOpsFile, *standins); err != nil {
		log.Fatal(err)
	}
}

// The password never travels on the command line (any user sees argv in ps and /proc/PID/cmdline)
// and never appears in the ready line or the log: it comes from a file or from the environment,
// and the variable is removed so nothing the harness starts inherits it.
const passwordEnv = "VCSIM_HARNESS_PASSWORD"

func readPassword(file string) (string, error) {
	if file != "" {
		b, err := ioutil.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("-password-file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if v, ok := os.LookupEnv(passwordEnv); ok {
		os.Unsetenv(passwordEnv)
		return v, nil
	}
	return "pass", nil
}

type modelCounts struct{ cluster, clusterHost, standaloneHost, vm int }

func run(esx bool, counts modelCounts, listen, certDir, dataDir, username, password string, idle time.Duration, trace bool, guestDir, guestOpsFile, standins string) error {
	if username == "" || password == "" {
		return fmt.Errorf("-username and the password (-password-file or $%s) must not be empty", passwordEnv)
	}
	removeData := false
	if dataDir == "" {
		d, err := ioutil.TempDir("", "vcsim-harness-data-")
		if err != nil {
			return err
		}
		dataDir, removeData = d, true
	}
	if certDir == "" {
		certDir = filepath.Join(dataDir, "tls")
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	cert, certFile, thumb, err := selfSignedCert(certDir)
	if err != nil {
		return fmt.Errorf("generating TLS certificate: %w", err)
	}

	model := simulator.VPX()
	if esx {
		model = simulator.ESX()
	} else {
		for _, c := range []struct {
			v   int
			dst *int
		}{{counts.cluster, &model.Cluster}, {counts.clusterHost, &model.ClusterHost}, {counts.standaloneHost, &model.Host}, {counts.vm, &model.Machine}} {
			if c.v >= 0 {
				*c.dst = c.v
			}
		}
	}
	if err := model.Create(); err != nil {
		return fmt.Errorf("creating simulator model: %w", err)
	}
	defer model.Remove()
	simulator.Trace = trace

	// A fresh Userinfo (never simulator.DefaultLogin) makes the simulator compare credentials,
	// so a wrong password gets InvalidLogin as on a real host.
	model.Service.Listen = &url.URL{Host: listen, User: url.UserPassword(username, password)}
	model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}

	if err := applyVersionProfile(labProfile, esx); err != nil {
		return fmt.Errorf("applying version profile %s: %w", labProfile.Name, err)
	}

	h := newHarness(dataDir, idle)
	h.auth.adminUser, h.auth.adminPassword = username, password
	h.esx = esx
	if guestDir != "" {
		g, err := newGuestDisks(guestDir)
		if err != nil {
			return err
		}
		defer g.close()
		h.guest = g
		enableDiskUUIDOnAll()
		g.ignoreExisting()
	}
	if err := h.installStorage(); err != nil {
		return fmt.Errorf("adding storage model: %w", err)
	}
	installPaging()
	installListViews()
	if guestOpsFile != "" {
		if standins == "" {
			standins = defaultStandins()
		}
		ops, err := newGuestOps(guestOpsFile, standins, esx)
		if err != nil {
			return err
		}
		defer ops.close()
		ops.guestDisks = h.guest
		if h.guest != nil {
			h.guest.setOwners(ops.diskOwners())
		}
		ops.install()
		h.guestOps = ops
	}
	installWaitForUpdates()
	installPerf(esx)

	// endpoints beside /sdk: SPBM's /pbm (pbm.go); vCenter only
	model.Service.RegisterEndpoints = true
	server := model.Service.NewServer()
	defer server.Close()
	// NewServer starts serving its own mux; no request can arrive before the ready line is
	// printed, so swapping the handler here is not racy in practice.
	h.sim = server.Config.Handler
	server.Config.Handler = h

	u := *server.URL
	u.User = nil
	host, port, _ := net.SplitHostPort(u.Host)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort("127.0.0.1", port)
	}
	if h.guestOps != nil {
		h.guestOps.listenHost = u.Host
	}
	apiType := "VirtualCenter"
	if esx {
		apiType = "HostAgent"
	}
	line, _ := json.Marshal(readyLine{
		URL: u.String(), Thumbprint: thumb, CertFile: certFile,
		Username: username, Pid: os.Getpid(), APIType: apiType, DataDir: dataDir, Version: labProfile.Version,
	})
	fmt.Println(string(line))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	// a held call would keep server.Close (deferred) waiting: everything held goes on now
	h.release("")
	if removeData {
		defer os.RemoveAll(dataDir)
	}
	return nil
}

// defaultStandins is src/lab/harness/windows, beside the directory holding this binary.
func defaultStandins() string {
	exe, err := os.Executable()
	if err != nil {
		return "../windows"
	}
	return filepath.Join(filepath.Dir(exe), "..", "windows")
}

// selfSignedCert writes cert.pem and key.pem for 127.0.0.1/localhost and returns the SHA-256
// thumbprint in the colon-separated upper-case form vSphere shows for host certificates.
func selfSignedCert(dir string) (tls.Certificate, string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "vcsim-harness", Organization: []string{"storsweep lab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", "", err
	}
	keyDer, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, "", "", err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDer})
	certFile := filepath.Join(dir, "cert.pem")
	if err := ioutil.WriteFile(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, "", "", err
	}
	if err := ioutil.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600); err != nil {
		return tls.Certificate{}, "", "", err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, "", "", err
	}
	sum := sha256.Sum256(der)
	hexParts := make([]string, len(sum))
	for i, b := range sum {
		hexParts[i] = fmt.Sprintf("%02X", b)
	}
	abs, _ := filepath.Abs(certFile)
	return pair, abs, strings.Join(hexParts, ":"), nil
}
