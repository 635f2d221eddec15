"""Access modes of well-known storage provisioners, each with its source. Unknown ones: not checked.

- ebs.csi.aws.com, kubernetes.io/aws-ebs: ReadWriteOnce only ("invalid AccessModes [ReadWriteMany]: only
  AccessModes [ReadWriteOnce] are supported", wso2/kubernetes-apim#81; no ReadOnlyMany,
  kubernetes-sigs/aws-ebs-csi-driver#2178). docs/sources.md §S2.
- pd.csi.storage.gke.io, kubernetes.io/gce-pd: ReadWriteOnce, ReadOnlyMany ("only AccessModes
  [ReadWriteOnce ReadOnlyMany] are supported", PrivateBin/helm-chart#56). Same docs/sources.md §S2.
- disk.csi.azure.com, kubernetes.io/azure-disk: ReadWriteOnce (AKS default class; docs/sources.md §S2).
- efs.csi.aws.com, filestore.csi.storage.gke.io, file.csi.azure.com, kubernetes.io/azure-file: ReadWriteMany
  (docs/sources.md §S2: EFS efs-sc, Filestore standard-rwx/premium-rwx, AKS azurefile-csi).
- rbd.csi.ceph.com: ReadWriteOnce with a file system; ReadWriteMany only as a raw block volume, which the
  model cache is not (docs.ceph.com/en/latest/csi/ "RBD ... ReadWriteOnce with a local file system ...;
  ReadWriteMany raw block"). cephfs.csi.ceph.com: ReadWriteMany (docs.ceph.com/en/latest/csi/cephfs/).
  Rook and OpenShift Data Foundation prefix them (rook-ceph.rbd.csi.ceph.com, openshift-storage.…).
- Node-local provisioners (catalog/storage.py NODE_LOCAL_PROVISIONERS): ReadWriteOnce, as a volume on one node's
  disk is reachable from that node only ("the local volume becomes inaccessible" when its node is,
  kubernetes.io/docs/concepts/storage/volumes/#local).
"""

from __future__ import annotations

from catalog.storage import NODE_LOCAL_PROVISIONERS, WELL_KNOWN_CLASSES

RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"
ACCESS_MODES: dict[str, frozenset[str]] = {
    "ebs.csi.aws.com": frozenset({RWO}),
    "kubernetes.io/aws-ebs": frozenset({RWO}),
    "pd.csi.storage.gke.io": frozenset({RWO, ROX}),
    "kubernetes.io/gce-pd": frozenset({RWO, ROX}),
    "disk.csi.azure.com": frozenset({RWO}),
    "kubernetes.io/azure-disk": frozenset({RWO}),
    "efs.csi.aws.com": frozenset({RWO, ROX, RWX}),
    "filestore.csi.storage.gke.io": frozenset({RWO, ROX, RWX}),
    "file.csi.azure.com": frozenset({RWO, ROX, RWX}),
    "kubernetes.io/azure-file": frozenset({RWO, ROX, RWX}),
    "rbd.csi.ceph.com": frozenset({RWO}),
    "cephfs.csi.ceph.com": frozenset({RWO, ROX, RWX}),
    **{provisioner: frozenset({RWO}) for provisioner in NODE_LOCAL_PROVISIONERS},
}

# Cloud block disks live in one zone: bound Immediately, one may land where no GPU node is.
ZONAL_DISKS = frozenset(
    {
        "ebs.csi.aws.com",
        "kubernetes.io/aws-ebs",
        "pd.csi.storage.gke.io",
        "kubernetes.io/gce-pd",
        "disk.csi.azure.com",
        "kubernetes.io/azure-disk",
    }
)


def access_modes_of(provisioner: str) -> frozenset[str] | None:
    """The file-system access modes a provisioner supports; None when not known."""
    if provisioner in ACCESS_MODES:
        return ACCESS_MODES[provisioner]
    for suffix in ("rbd.csi.ceph.com", "cephfs.csi.ceph.com"):
        if provisioner.endswith("." + suffix):
            return ACCESS_MODES[suffix]
    return None


def known_read_write_once_only(class_name: str | None) -> bool:
    """A class the profiles name (catalog/storage.py WELL_KNOWN_CLASSES: gp3, standard-rwo, managed-csi, ...) whose
    provisioner gives no ReadWriteMany: several replicas cannot share one claim of it. Names are the cluster's,
    so this is the providers' default naming; a cluster check reads the class itself."""
    spec = WELL_KNOWN_CLASSES.get(class_name or "")
    modes = access_modes_of(spec.provisioner) if spec is not None else None
    return modes is not None and RWX not in modes


def describe_modes(modes: frozenset[str]) -> str:
    return " and ".join(m for m in (RWO, ROX, RWX) if m in modes)
