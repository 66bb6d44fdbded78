"""CDI spec rules (mirroring the CDI loader) and atomic spec files."""

from __future__ import annotations

import copy
import os

import pytest

from kubectl_dra.node import cdi

VALID = {
    "cdiVersion": "0.6.0",
    "kind": "vendor.com/device",
    "annotations": {"vendor.com/owner": "team-a"},
    "devices": [{
        "name": "myDevice",
        "containerEdits": {"deviceNodes": [{"hostPath": "/vendorroot/dev/card1", "path": "/dev/card1"},
                                           {"path": "/dev/card2", "permissions": "rw"}]},
    }],
    "containerEdits": {
        "env": ["FOO=CDI_SPEC", "EMPTY="],
        "deviceNodes": [{"path": "/dev/vendorctl", "uid": 1000, "gid": 1000, "type": "c"}],
        "mounts": [{"hostPath": "/bin/vendorBin", "containerPath": "/bin/vendorBin",
                    "options": ["ro", "bind"]}],
        "hooks": [{"hookName": "createContainer", "path": "/bin/vendor-hook", "timeout": 5}],
    },
}


def _with(change):
    spec = copy.deepcopy(VALID)
    change(spec)
    return spec


def test_valid_spec_has_no_errors():
    assert cdi.validate_spec(VALID) == []


@pytest.mark.parametrize("change, error", [
    (lambda s: s.pop("cdiVersion"), "cdiVersion: required"),
    (lambda s: s.update(cdiVersion="2.0.0"), "cdiVersion: invalid version '2.0.0'"),
    (lambda s: s.update(cdiVersion="0.5.0"), "cdiVersion: the spec version must be at least v0.6.0"),
    (lambda s: s.update(cdiVersion="0.1.0", annotations={}), "must be at least v0.5.0"),
    (lambda s: s.update(kind="vendor.com"), "kind: invalid kind 'vendor.com': want <vendor>/<class>"),
    (lambda s: s.update(kind="vendor.com/foo/bar"), "kind: invalid class 'foo/bar': invalid character '/'"),
    (lambda s: s.update(kind="1vendor.com/foo"), "should start with a letter"),
    (lambda s: s.update(kind="vendor.com/foo-"), "should end with a letter or digit"),
    (lambda s: s.update(kind="vendor.com/" + "c" * 64), "longer than 63 characters"),
    (lambda s: s.update(kind="vendor..com/foo"), "not a DNS subdomain"),
    (lambda s: s.update(devices=[]), "devices: invalid spec, no devices"),
    (lambda s: s["devices"].append(copy.deepcopy(s["devices"][0])), "multiple device 'myDevice'"),
    (lambda s: s["devices"][0].update(name="-dev"), "should start with a letter or digit"),
    (lambda s: s["devices"][0].update(name="a/b"), "invalid character '/'"),
    (lambda s: s["devices"][0].update(containerEdits={}), "invalid device, empty device edits"),
    (lambda s: s["containerEdits"]["env"].append("NOVALUE"), "invalid environment variable 'NOVALUE'"),
    (lambda s: s["containerEdits"]["env"].append("=x"), "invalid environment variable '=x'"),
    (lambda s: s["containerEdits"]["deviceNodes"].append({"path": ""}), "invalid (empty) device path"),
    (lambda s: s["containerEdits"]["deviceNodes"].append({"path": "dev/x"}), "'dev/x' must be absolute"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(type="x"), "invalid type 'x'"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(permissions="rwx"),
     "invalid permissions 'rwx'"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(uid=2**32), "uid: must be an integer"),
    (lambda s: s["containerEdits"]["hooks"][0].update(hookName="preStart"), "invalid hook name"),
    (lambda s: s["containerEdits"]["hooks"][0].update(path="vendor-hook"), "must be absolute"),
    (lambda s: s["containerEdits"]["hooks"][0].update(timeout=0), "timeout: must be an integer"),
    (lambda s: s["containerEdits"]["mounts"][0].pop("containerPath"), "containerPath: required"),
    (lambda s: s["containerEdits"]["mounts"][0].update(containerPath="bin"), "must be absolute"),
    (lambda s: s.update(extra=1), "extra: unknown field"),
    (lambda s: s["devices"][0].update(extra=1), "devices[0].extra: unknown field"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(major="1"), "major: must be an integer"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(size=1),
     "containerEdits.deviceNodes[0].size: unknown field"),
    (lambda s: s["annotations"].update({"bad key!": "x"}), "annotations.bad key!: name part"),
    (lambda s: s["annotations"].update({"a.b/c": 1}), "value must be a string"),
    (lambda s: s.update(cdiVersion="1.1.0") or s["containerEdits"].update(
        netDevices=[{"hostInterfaceName": "eth1", "name": "a"},
                    {"hostInterfaceName": "eth1", "name": "b"}]),
     "duplicate HostInterfaceName 'eth1'"),
    (lambda s: s["containerEdits"].update(intelRdt={"closID": ".."}), "invalid closID"),
])
def test_invalid_specs(change, error):
    errors = cdi.validate_spec(_with(change))
    assert any(error in e for e in errors), errors


def test_version_with_leading_v_is_accepted():
    assert cdi.validate_spec(_with(lambda s: s.update(cdiVersion="v0.6.0"))) == []


@pytest.mark.parametrize("change, version", [
    (lambda s: None, "0.3.0"),
    (lambda s: s["containerEdits"]["mounts"][0].update(type="bind"), "0.4.0"),
    (lambda s: s["devices"][0].update(name="0dev"), "0.5.0"),
    (lambda s: s["containerEdits"]["deviceNodes"][0].update(hostPath="/h"), "0.5.0"),
    (lambda s: s.update(annotations={"a": "b"}), "0.6.0"),
    (lambda s: s.update(kind="vendor.com/dev.ice"), "0.6.0"),
    (lambda s: s["containerEdits"].update(additionalGids=[5]), "0.7.0"),
    (lambda s: s["containerEdits"].update(intelRdt={"closID": "c"}), "0.7.0"),
    (lambda s: s["containerEdits"].update(intelRdt={"schemata": ["L3:0=f"]}), "1.1.0"),
    (lambda s: s["devices"][0]["containerEdits"].update(
        netDevices=[{"hostInterfaceName": "eth1", "name": "net1"}]), "1.1.0"),
])
def test_minimum_version(change, version):
    spec = {"cdiVersion": "1.1.0", "kind": "vendor.com/device",
            "devices": [{"name": "dev", "containerEdits": {"deviceNodes": [{"path": "/dev/x"}]}}],
            "containerEdits": {"deviceNodes": [{"path": "/dev/y"}],
                               "mounts": [{"hostPath": "/a", "containerPath": "/a"}]}}
    change(spec)
    assert cdi.minimum_version(spec) == version


def test_names():
    assert cdi.qualified_name("k8s.kubectl-dra.io/claim", "uid-gpu-0") == \
        "k8s.kubectl-dra.io/claim=uid-gpu-0"
    assert cdi.transient_spec_name("k8s.kubectl-dra.io/claim", "a/b") == \
        "k8s.kubectl-dra.io-claim_a_b"


def test_write_is_atomic_and_unchanged_content_is_not_rewritten(tmp_path):
    root = tmp_path / "cdi"
    path, changed = cdi.write_spec(root, "vendor.com-device_x", VALID)
    assert changed and path == root / "vendor.com-device_x.json"
    assert cdi.read_spec(path) == VALID
    assert os.listdir(root) == ["vendor.com-device_x.json"]  # no temporary file left behind
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    before = path.stat()
    path_again, changed = cdi.write_spec(root, "vendor.com-device_x", VALID)
    assert (path_again, changed) == (path, False)
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    changed_spec = _with(lambda s: s["containerEdits"]["env"].append("NEW=1"))
    assert cdi.write_spec(root, "vendor.com-device_x", changed_spec)[1]
    assert cdi.read_spec(path) == changed_spec


def test_invalid_spec_is_never_written(tmp_path):
    with pytest.raises(cdi.CdiError, match="^invalid CDI spec: devices: invalid spec, no devices$"):
        cdi.write_spec(tmp_path, "x", _with(lambda s: s.update(devices=[])))
    assert list(tmp_path.iterdir()) == []


def test_remove(tmp_path):
    path, _ = cdi.write_spec(tmp_path, "x", VALID)
    assert cdi.remove_spec(path) is True
    assert cdi.remove_spec(path) is False
