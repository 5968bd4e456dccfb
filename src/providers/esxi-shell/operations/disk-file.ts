// Removing a VMDK or an RDM mapping file this run created (`vmkfstools -U`), by its recorded path.
import { RemoteCommandFailed } from '../../../errors.ts';
import type { ObjectKind } from '../../../contract/operation.ts';
import { shJoin } from '../../../ssh/quote.ts';
import { ownedPath, recorded, type EsxiHost } from '../host.ts';
import { deleteDiskArgv } from '../vmkfstools.ts';

export const diskFile: ObjectKind<EsxiHost> = {
  async destroy(obj, ctx) {
    // Only what the ledger recorded: the path, carrying the owned name
    const h = ctx.host;
    const path = ownedPath(h, recorded(obj.data.path, 'path'), obj.name, obj.kind);
    const r = await h.runner.run(shJoin(deleteDiskArgv(path)));
    if (r.exitCode === 0) return 'removed';
    // the file, or its whole datastore, is already gone
    if (/cannot find the file|does not exist|not found|No such file or directory/i.test(r.stdout + r.stderr)) return 'absent';
    // vmkfstools prints its errors on stdout
    throw new RemoteCommandFailed({ host: h.runner.target, what: 'vmkfstools -U', command: r.command, exitCode: r.exitCode, stderr: [r.stdout, r.stderr].filter((x) => x.trim()).join('\n'), reason: 'exit' });
  },
  // disks: destroy() is idempotent on the recorded path; the shell offers no cheap lookup by name
};
