#!/usr/bin/env python3
"""mkimage.py — container images for the --image tests, built by hand.

  mkimage.py layer OUT.tar SPEC...    one layer (a plain tar); SPEC is
      tree:DIR                the files below DIR (owner 0, modes kept)
      file:NAME:TEXT[:MODE]   a file (MODE octal, default 644)
      dir:NAME                a directory
      sym:NAME:TARGET         a symbolic link
      hard:NAME:TARGET        a hard link to TARGET (an archive name)
      chr:NAME  fifo:NAME     a character device (1,3), a FIFO
      cap:NAME:TEXT           a file with a security.capability xattr (pax)
      xattr:NAME:TEXT         a file with a user.note xattr (pax)
  mkimage.py docker OUT.tar LAYER.tar...     a docker-archive (docker save)
  mkimage.py oci OUTDIR [--gzip] LAYER.tar... an OCI image layout directory
  mkimage.py oci-tar OUT.tar [--gzip] LAYER.tar... the same as a tarball
Prints the image's digest: the config's (docker), the manifest's (oci).
"""
import gzip, hashlib, io, json, os, sys, tarfile, time

def sha(b):
    return hashlib.sha256(b).hexdigest()

def add(t, ti, data=None):
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.mtime = 1700000000
    t.addfile(ti, io.BytesIO(data) if data is not None else None)

def layer(out, specs):
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        for s in specs:
            kind, _, rest = s.partition(":")
            if kind == "tree":
                base = rest
                for root, dirs, files in os.walk(base):
                    dirs.sort()
                    for n in sorted(dirs) + sorted(files):
                        p = os.path.join(root, n)
                        ti = t.gettarinfo(p, os.path.relpath(p, base))
                        if ti.isreg():
                            with open(p, "rb") as f:
                                add(t, ti, f.read())
                        else:
                            add(t, ti)
                continue
            parts = rest.split(":")
            ti = tarfile.TarInfo(parts[0])
            if kind in ("file", "cap", "xattr"):
                data = parts[1].encode() if len(parts) > 1 else b""
                ti.size = len(data)
                ti.mode = int(parts[2], 8) if len(parts) > 2 else 0o644
                if kind == "cap":
                    ti.pax_headers = {"SCHILY.xattr.security.capability":
                                      "\x01\x00\x00\x02\x00\x20\x00\x00"}
                if kind == "xattr":
                    ti.pax_headers = {"SCHILY.xattr.user.note": "x"}
                add(t, ti, data)
            elif kind == "dir":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                add(t, ti)
            elif kind == "sym":
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, parts[1], 0o777
                add(t, ti)
            elif kind == "hard":
                ti.type, ti.linkname, ti.mode = tarfile.LNKTYPE, parts[1], 0o644
                add(t, ti)
            elif kind == "chr":
                ti.type, ti.devmajor, ti.devminor, ti.mode = tarfile.CHRTYPE, 1, 3, 0o666
                add(t, ti)
            elif kind == "fifo":
                ti.type, ti.mode = tarfile.FIFOTYPE, 0o644
                add(t, ti)
            else:
                sys.exit("mkimage.py: unknown spec " + s)

def config(diff_ids):
    return json.dumps({"architecture": "amd64", "os": "linux",
                       "config": {"Env": ["PATH=/bin:/usr/local/bin"], "Cmd": ["/bin/sh"]},
                       "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()

def docker(out, layers):
    blobs = [open(l, "rb").read() for l in layers]
    cfg = config(["sha256:" + sha(b) for b in blobs])
    c = sha(cfg)
    man = json.dumps([{"Config": c + ".json", "RepoTags": ["cordon-test:1"],
                       "Layers": ["l%d/layer.tar" % i for i in range(len(blobs))]}]).encode()
    with tarfile.open(out, "w") as t:
        add(t, mk("manifest.json", man), man)
        add(t, mk(c + ".json", cfg), cfg)
        for i, b in enumerate(blobs):
            add(t, mk("l%d/layer.tar" % i, b), b)
    print("sha256:" + c)

def mk(name, data):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode = len(data), 0o644
    return ti

def oci_files(layers, gz):
    files = {"oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode()}
    descs, diff = [], []
    for l in layers:
        b = open(l, "rb").read()
        diff.append("sha256:" + sha(b))
        mt = "application/vnd.oci.image.layer.v1.tar"
        if gz:
            b = gzip.compress(b, mtime=0)
            mt += "+gzip"
        files["blobs/sha256/" + sha(b)] = b
        descs.append({"mediaType": mt, "digest": "sha256:" + sha(b), "size": len(b)})
    cfg = config(diff)
    files["blobs/sha256/" + sha(cfg)] = cfg
    man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                      "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                 "digest": "sha256:" + sha(cfg), "size": len(cfg)},
                      "layers": descs}).encode()
    files["blobs/sha256/" + sha(man)] = man
    files["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json",
         "digest": "sha256:" + sha(man), "size": len(man)}]}).encode()
    return files, "sha256:" + sha(man)

def main(a):
    if a[0] == "layer":
        layer(a[1], a[2:])
    elif a[0] == "docker":
        docker(a[1], a[2:])
    elif a[0] in ("oci", "oci-tar"):
        gz = "--gzip" in a[2:]
        files, d = oci_files([x for x in a[2:] if x != "--gzip"], gz)
        if a[0] == "oci":
            for n, b in files.items():
                os.makedirs(os.path.join(a[1], os.path.dirname(n)), exist_ok=True)
                with open(os.path.join(a[1], n), "wb") as f:
                    f.write(b)
        else:
            with tarfile.open(a[1], "w") as t:
                for n, b in files.items():
                    add(t, mk(n, b), b)
        print(d)
    else:
        sys.exit(__doc__)

main(sys.argv[1:])
