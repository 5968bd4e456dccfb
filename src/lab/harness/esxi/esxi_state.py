# STAND-IN support module (not a VMware tool): shared state and helpers for the ESXi shell stand-ins
# in this directory (vmkfstools, partedUtil, esxcli, vim-cmd). ESXi cannot run on the test machine, so
# the stand-ins keep a model of the host in $STORSWEEP_STANDIN_STATE/esxi.json and record every
# invocation (argv as received, one JSON line each) in $STORSWEEP_STANDIN_STATE/commands.jsonl.
# They never execute anything they are given: arguments are data.
import fcntl
import json
import os
import sys

STATE_DIR = os.environ.get('STORSWEEP_STANDIN_STATE')
DEVFS = '/vmfs/devices/disks/'
VOLUMES = '/vmfs/volumes/'
VMFS_GUID = 'AA31E02A400F11DB9590000C2911D1B8'


class Fail(Exception):
    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


def run(tool, main):
    """Lock the state, log argv, run main(argv, state) and save; errors go to stderr with exit code."""
    if not STATE_DIR:
        sys.stderr.write(f'{tool} stand-in: STORSWEEP_STANDIN_STATE is not set\n')
        sys.exit(2)
    argv = sys.argv[1:]
    with open(os.path.join(STATE_DIR, 'commands.jsonl'), 'a', encoding='utf-8') as log:
        log.write(json.dumps({'tool': tool, 'argv': argv}) + '\n')
    path = os.path.join(STATE_DIR, 'esxi.json')
    with open(os.path.join(STATE_DIR, 'esxi.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(path, encoding='utf-8') as f:
            state = json.load(f)
        try:
            out = main(argv, state)
        except Fail as e:
            sys.stdout.flush()
            sys.stderr.write(str(e) + '\n')
            sys.exit(e.code)
        tmp = path + '.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, path)
    if out:
        sys.stdout.write(out)


# The host's release (state['product'], seeded by state.ts from `npm run lab -- up --version`).
# Rules follow the vSphere Storage guides; the toolkit's copy is src/providers/esxi-version.ts.
DEFAULT_PRODUCT = {'version': '8.0.0', 'build': '20513097'}


def product(state):
    return state.get('product') or DEFAULT_PRODUCT


def release(state):
    major, minor = product(state)['version'].split('.')[:2]
    return int(major), int(minor)


def vmfs_creatable(state, fstype):
    """VMFS3: not creatable from ESXi 6.0 on ("you cannot create new ones", vSphere 6.0 Storage,
    "Understanding VMFS Datastores"); VMFS6: ESXi 6.5 and later (vSphere 7.0 Storage, "Versions of
    VMFS Datastores": hosts of 6.0 and earlier have no access); VMFS5: 5.0 and later."""
    rel = release(state)
    return {'vmfs3': rel < (6, 0), 'vmfs5': rel >= (5, 0), 'vmfs6': rel >= (6, 5)}.get(fstype, False)


def device_from_path(state, p, tool):
    if not p.startswith(DEVFS):
        raise Fail(f'Error: Could not stat device {p}- No such file or directory.')
    name = p[len(DEVFS):]
    if name not in state['devices']:
        raise Fail(f'Error: Could not stat device {p}- No such file or directory.')
    return name


def sectors(dev):
    return dev['sizeMb'] * 2048


def volume_by_label_or_uuid(state, key):
    for uuid, v in state['volumes'].items():
        if key in (uuid, v['label']):
            return uuid, v
    return None, None


def resolve_file(state, p):
    """/vmfs/volumes/<label|uuid>/<rest> on a mounted volume → (canonical path, volume) or Fail."""
    if not p.startswith(VOLUMES):
        raise Fail(f'Invalid path {p}: not under {VOLUMES}')
    rest = p[len(VOLUMES):]
    ds, _, name = rest.partition('/')
    uuid, vol = volume_by_label_or_uuid(state, ds)
    if not vol or not vol['mounted']:
        raise Fail(f'Failed to find volume {ds} (No such file or directory)')
    if not name or '..' in name.split('/') or name.count('/') > 1 or '' in name.split('/'):
        raise Fail(f'Invalid path {p}')
    return VOLUMES + vol['label'] + '/' + name, vol


def in_use_by_volume(state, device):
    return [v for v in state['volumes'].values() if v['device'] == device and v['mounted']]


def drop_volumes(state, device, partition=None):
    """A partition table change destroys the (unmounted) VMFS volumes it held."""
    for u in [u for u, v in state['volumes'].items() if v['device'] == device and partition in (None, v['partition'])]:
        del state['volumes'][u]
