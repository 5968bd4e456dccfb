# STAND-IN support module (not a VMware tool): the lab guest's view of the disks `vim-cmd
# vmsvc/device.diskaddexisting` attaches to a VM, as the vcsim harness gives them to the vSphere
# lab (src/lab/harness/vcsim/guestdisks.go, the same layout). A real Linux guest sees each disk
# attached to its VM as a block device that udev names in /dev/disk/by-id after the WWN the
# virtual disk reports. The lab's guest is this machine, so when the host model names a guest-disk
# directory (state['guestDisks'], set by the lab and by tests), every attach makes a real block
# device: a sparse file of the disk's size (DIR/files) on a loop device (losetup), published as
# DIR/by-id/wwn-0x<id> -> /dev/loopN. The lab has no udev, so the guest's by-id directory is
# DIR/by-id (the inventory's guest.byIdDir): the one difference from a real guest. Removing the
# disk detaches the loop device and removes the link; deleting a VMDK (vmkfstools -U) deletes its
# image. A LUN's image (DIR/files/<naa>.img) stays: a LUN's contents outlive a mapping.
#
# The WWN the guest sees, as on a real host (real-product-rules.md section 3.4):
#   - a VMDK and a virtual-mode RDM: only with the VM's disk.EnableUUID = TRUE does the virtual disk
#     answer VPD pages 0x80/0x83; its WWN is then the descriptor's ddb.uuid without spaces or dash
#     (60 00 C2 9x ... -> 6000c29x..., elatov/elatov.github.io
#     _posts/2012-03-26-missing-links-to-devices-on-linux-vms-under-devdiskby-id.md citing VMware KB
#     1029157; the exact uuid -> WWN mapping is unverified, the vSphere lab assumes the same).
#     Without it the disk appears (a loop device) but with no by-id link;
#   - a physical-mode RDM passes the LUN's own inquiry data through: wwn-0x<the LUN's NAA id>.
# udev's name is wwn-$ID_WWN_WITH_EXTENSION (systemd rules.d/60-persistent-storage.rules).
#
# The link follows udev's rules per controller type (link_name), as the vSphere lab's does
# (guestdisks.go): a disk on a SCSI controller (lsilogic, buslogic, lsisas1068, pvscsi: the
# types vim-cmd takes, and what the VM's bus is unless the host model says otherwise,
# vms[id].controllers[bus]) is a SCSI disk and gets wwn-0x<id>; a disk on a virtual NVMe
# controller is an NVMe namespace, for which udev makes no wwn- link: 60-persistent-storage.rules'
# "# NVMe" block links disk/by-id/nvme-$ID_WWN from the namespace's sysfs wwid ("eui.<hex>",
# "uuid.<uuid>" or "nvme.<vid>-<serial>-<model>-<nsid>"; Linux commit 118472ab8532) and
# nvme-<model>_<serial>, while the wwn- rule needs ID_WWN_WITH_EXTENSION, set only by the SCSI/ATA
# probes. Which id a VMware virtual NVMe namespace reports (and whether disk.EnableUUID matters)
# is unverified: the lab links nvme-eui.<the ddb.uuid's 32 hex>. What the toolkit must meet is
# that no wwn-0x link exists for it. An IDE disk keeps the wwn-0x link (what udev's ATA probe
# gives a VMware virtual IDE disk is unverified; the toolkit never attaches one there).
import os
import re
import subprocess

from esxi_state import Fail


def enabled(vm):
    """The VM's disk.EnableUUID (a .vmx option; keys compare without regard to case): TRUE in any
    case, or 1 (the form the Kubernetes vSphere Cloud Provider docs set, kubernetes/website PR #2989)."""
    for k, v in (vm.get('extraConfig') or {}).items():
        if k.lower() == 'disk.enableuuid':
            return str(v).strip().upper() in ('TRUE', '1')
    return False


def wwn_of_ddb_uuid(u):
    h = re.sub(r'[\s-]', '', u or '').lower()
    return h if re.fullmatch(r'[0-9a-f]{32}', h) else None


SCSI_TYPES = ('lsilogic', 'buslogic', 'lsisas1068', 'pvscsi')


def controller_type(vm, bus, given=None):
    """The controller a disk at `bus` sits on: the type vim-cmd was given, else the VM's (host model), else SCSI."""
    return given or (vm.get('controllers') or {}).get(str(bus)) or 'lsilogic'


def link_name(ctype, wwn, ddb_uuid):
    """The by-id name udev gives the disk on a controller of type `ctype` (see the top), or None."""
    if ctype == 'nvme':
        nid = wwn_of_ddb_uuid(ddb_uuid)
        return 'nvme-eui.' + nid if nid else None
    return 'wwn-0x' + wwn if wwn else None


def image_of(root, path, f):
    if f['kind'] == 'rdmp' or f['kind'] == 'rdm':
        return os.path.join(root, 'files', f['device'] + '.img')
    return os.path.join(root, 'files', re.sub(r'[^A-Za-z0-9._-]', '_', path.strip('/')) + '.img')


def _run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise Fail(f'lab guest disk: {" ".join(argv)}: {(r.stderr or r.stdout).strip()}')
    return r.stdout.strip()


def attach(state, vm, key, path, ctype='lsilogic'):
    """Gives the lab guest the block device of the disk just attached at `key` (bus:unit) on a `ctype` controller."""
    root = state.get('guestDisks')
    if not root:
        return
    f = state['files'][path]
    if f['kind'] == 'rdmp':
        wwn = re.sub(r'^naa\.', '', f['device']).lower()
        size = state['devices'][f['device']]['sizeMb'] * 1024 * 1024
    elif f['kind'] == 'rdm':
        wwn = wwn_of_ddb_uuid(f.get('uuid')) if enabled(vm) else None
        size = state['devices'][f['device']]['sizeMb'] * 1024 * 1024
    else:
        wwn = wwn_of_ddb_uuid(f.get('uuid')) if enabled(vm) else None
        size = f['sizeBytes']
    for d in ('by-id', 'files'):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    image = image_of(root, path, f)
    if not os.path.exists(image):
        # sparse: a new disk reads zeros, as a thin or lazy-zeroed VMDK does
        with open(image, 'xb') as fh:
            fh.truncate(size)
    # -P: the kernel reads its partition table, as it does a real disk's
    loop = _run(['losetup', '-f', '-P', '--show', image])
    link = None
    name = link_name(ctype, wwn, f.get('uuid'))
    if name:
        link = os.path.join(root, 'by-id', name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(loop, link)
    vm.setdefault('guestDevices', {})[key] = {'loop': loop, 'link': link, 'image': image, 'vmdk': f['kind'] == 'vmdk'}


def detach(vm, key):
    g = (vm.get('guestDevices') or {}).pop(key, None)
    if not g:
        return
    if g.get('link') and os.path.lexists(g['link']):
        os.remove(g['link'])
    # partitions the guest added (partx -a) go with the loop device
    subprocess.run(['partx', '-d', g['loop']], capture_output=True)
    subprocess.run(['losetup', '-d', g['loop']], capture_output=True)


def forget_image(state, path, f):
    """vmkfstools -U: the VMDK's image goes with it (a LUN's stays)."""
    root = state.get('guestDisks')
    if root and f.get('kind') == 'vmdk':
        image = image_of(root, path, f)
        if os.path.exists(image):
            os.remove(image)
