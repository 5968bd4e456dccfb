// Guest operations, the pure parts: the request bodies (NamePasswordAuthentication as the typed
// `auth`, GuestProgramSpec in WSDL order), the transfer URL's `*` host, a process listing's exit,
// and the Windows command lines (CommandLineToArgvW quoting).
import { describe, expect, it } from 'vitest';
import { redactUrl, transferUrl } from '../../../../src/providers/vsphere/guest-ops.ts';
import { exitOf, windowsArg } from '../../../../src/providers/vsphere/guest-runner.ts';
import { buildEnvelope } from '../../../../src/providers/vsphere/soap.ts';
import { decodeNode, toSoap } from '../../../../src/providers/vsphere/types.ts';
import { parseXml } from '../../../../src/providers/vsphere/soap.ts';
import { TOOLS_GUEST_CALL_BODY, buildScript } from '../../../../src/providers/hyperv/powershell.ts';

const body = (xml: string) => /<soapenv:Body>(.*)<\/soapenv:Body>/.exec(xml)![1]!;

describe('guest operation request bodies', () => {
  it('StartProgramInGuest: auth is xsi:type NamePasswordAuthentication {interactiveSession, username, password}, spec in WSDL order', () => {
    const xml = buildEnvelope('StartProgramInGuest', { type: 'GuestProcessManager', value: 'guestOperationsProcessManager' }, [
      ['vm', { type: 'VirtualMachine', value: 'vm-42' }],
      ['auth', toSoap({ _type: 'NamePasswordAuthentication', password: 'p<w', username: 'root', interactiveSession: false }, 'GuestAuthentication')],
      ['spec', toSoap({ workingDirectory: '/var/tmp', arguments: "-c 'id -u'", programPath: '/bin/sh' }, 'GuestProgramSpec')],
    ]);
    expect(body(xml)).toBe(
      '<StartProgramInGuest xmlns="urn:vim25"><_this type="GuestProcessManager">guestOperationsProcessManager</_this><vm type="VirtualMachine">vm-42</vm>' +
        '<auth xsi:type="NamePasswordAuthentication"><interactiveSession>false</interactiveSession><username>root</username><password>p&lt;w</password></auth>' +
        '<spec><programPath>/bin/sh</programPath><arguments>-c &apos;id -u&apos;</arguments><workingDirectory>/var/tmp</workingDirectory></spec></StartProgramInGuest>',
    );
  });

  it('ListProcessesInGuest: a GuestProcessInfo decodes with pid, endTime and exitCode typed', () => {
    const node = parseXml('<returnval xmlns="urn:vim25"><name>sh</name><pid>4242</pid><owner>storsweep-guest</owner><cmdLine>"/bin/sh" -c x</cmdLine><startTime>2026-12-01T17:00:00Z</startTime><endTime>2026-12-01T17:00:01Z</endTime><exitCode>3</exitCode></returnval>');
    const p = decodeNode(node, 'GuestProcessInfo') as Record<string, unknown>;
    expect(p).toMatchObject({ pid: 4242, exitCode: 3, endTime: '2026-12-01T17:00:01Z', owner: 'storsweep-guest' });
  });
});

describe('a process listing', () => {
  const base = { name: 'sh', owner: 'u', cmdLine: 'sh', startTime: '2026-12-01T17:00:00Z' };
  it('running, ended with its code, ended with none, or not listed', () => {
    expect(exitOf([{ ...base, pid: 7 }], 7)).toEqual({ ended: false, exitCode: null });
    expect(exitOf([{ ...base, pid: 7, endTime: '2026-12-01T17:00:02Z', exitCode: 0 }], 7)).toEqual({ ended: true, exitCode: 0 });
    expect(exitOf([{ ...base, pid: 7, endTime: '2026-12-01T17:00:02Z' }], 7)).toEqual({ ended: true, exitCode: null });
    expect(exitOf([{ ...base, pid: 8 }], 7)).toBeUndefined();
  });
});

describe('the transfer URL', () => {
  it('"*" is the host the SOAP session reached, with its port (FileManager: "substitute the host name you used")', () => {
    expect(transferUrl('https://*/guestFile?id=1&token=abc', '127.0.0.1:40029').toString()).toBe('https://127.0.0.1:40029/guestFile?id=1&token=abc');
    expect(transferUrl('https://*:8443/guestFile?id=1', 'vc.lab:443').toString()).toBe('https://vc.lab:8443/guestFile?id=1');
    expect(transferUrl('https://*/x', '[::1]:9443').toString()).toBe('https://[::1]:9443/x');
  });
  it('a named host (a vCenter hands out its ESX host) is kept; http is refused; the ticket is never shown', () => {
    expect(transferUrl('https://esx01.lab:443/guestFile?id=1', 'vc.lab').host).toBe('esx01.lab');
    expect(() => transferUrl('http://*/guestFile?id=1&token=SECRET', 'vc.lab')).toThrow(/is not https/);
    expect(() => transferUrl('http://*/guestFile?id=1&token=SECRET', 'vc.lab')).not.toThrow(/SECRET/);
    expect(redactUrl('https://esx/guestFile?id=1&token=SECRET')).toBe('https://esx/guestFile?…');
  });
});

describe('Windows command lines', () => {
  it('arguments are quoted by CommandLineToArgvW rules only when they need it', () => {
    expect(['-b4K', '-o32', '#1', 'C:\\a b\\x.dat', 'say "hi"', 'C:\\dir with space\\', ''].map(windowsArg)).toEqual(['-b4K', '-o32', '#1', '"C:\\a b\\x.dat"', '"say \\"hi\\""', '"C:\\dir with space\\\\"', '""']);
  });
  it('the storage calls script carries its data as base64 JSON only: no value is PowerShell source', () => {
    const hostile = "'; Remove-Item C:\\ -Recurse #";
    const script = buildScript(TOOLS_GUEST_CALL_BODY, { calls: [{ cmdlet: 'Get-Disk', params: { FriendlyName: hostile }, select: ['Number'] }] });
    expect(script).not.toContain(hostile);
    expect(script).not.toContain('Remove-Item');
    expect(script).toMatch(/FromBase64String\('[A-Za-z0-9+/=]+'\)/);
    expect(script).toContain("$allowed = @('Get-Disk', 'Set-Disk'");
    expect(script).toContain('[IO.File]::WriteAllText($p.out, (ConvertTo-Json -InputObject @($out) -Depth 5 -Compress))');
  });
});
