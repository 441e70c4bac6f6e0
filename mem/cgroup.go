package mem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Files read below the root handed to DetectLimitFS, without the leading
// slash that fs.FS paths do not allow.
const (
	procCgroupFile = "proc/self/cgroup"
	mountinfoFile  = "proc/self/mountinfo"
	meminfoFile    = "proc/meminfo"
)

// memCgroup is the memory controller's cgroup of this process in one
// hierarchy, as fs.FS paths.
type memCgroup struct {
	v2    bool
	mount string // where the hierarchy (or the part visible to us) is mounted
	dir   string // this process's cgroup: mount or below it
}

// levels returns dir and its ancestors up to the mount point, leaf first.
// Ancestors above the mount point are invisible to this process; in a
// container that is the container's own cgroup.
func (c memCgroup) levels() []string {
	var out []string
	d := c.dir
	for {
		out = append(out, d)
		if d == c.mount || !strings.HasPrefix(d, c.mount+"/") && c.mount != "." {
			return out
		}
		d = path.Dir(d)
	}
}

// cgroupMount is one cgroup filesystem from mountinfo.
type cgroupMount struct {
	v2     bool
	memory bool   // v1: the memory controller is attached
	root   string // the hierarchy path shown at the mount point
	point  string // fs path of the mount point
}

// findMemCgroups locates this process's memory cgroups from
// /proc/self/cgroup and /proc/self/mountinfo. It returns the cgroup v2
// hierarchy (if the process is in one) and the cgroup v1 memory hierarchy
// (if mounted); on hybrid systems both, and the caller looks for memory
// files in each, since the memory controller lives in exactly one of them.
// A missing /proc/self/cgroup means no cgroups; a missing mountinfo means
// the conventional mount points are assumed.
func findMemCgroups(fsys fs.FS) ([]memCgroup, error) {
	data, err := readOptional(fsys, procCgroupFile)
	if err != nil || data == nil {
		return nil, err
	}
	var v2Path, v1Path string
	var hasV2, hasV1 bool
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		// hierarchy-ID:controller-list:cgroup-path; the path may hold colons.
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("mem: /%s: malformed line %q", procCgroupFile, line)
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2Path, hasV2 = f[2], true
		case hasController(f[1], "memory"):
			v1Path, hasV1 = f[2], true
		}
	}
	if !hasV2 && !hasV1 {
		return nil, nil
	}

	mounts, err := readCgroupMounts(fsys)
	if err != nil {
		return nil, err
	}
	if mounts == nil {
		mounts = []cgroupMount{
			{v2: true, root: "/", point: "sys/fs/cgroup"},
			{memory: true, root: "/", point: "sys/fs/cgroup/memory"},
		}
	}
	var out []memCgroup
	if hasV2 {
		if c, ok := resolveCgroup(mounts, true, v2Path); ok {
			out = append(out, c)
		}
	}
	if hasV1 {
		if c, ok := resolveCgroup(mounts, false, v1Path); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// resolveCgroup turns a cgroup path from /proc/self/cgroup into a directory
// below a matching mount. The mount shows the hierarchy from its root, so
// the path is taken relative to that root; a path outside it (a process
// moved out of a namespaced container's view) maps to the mount point.
func resolveCgroup(mounts []cgroupMount, v2 bool, cgPath string) (memCgroup, bool) {
	var fallback *cgroupMount
	cgPath = path.Clean("/" + cgPath)
	for i := range mounts {
		mt := &mounts[i]
		if mt.v2 != v2 || (!v2 && !mt.memory) {
			continue
		}
		root := path.Clean("/" + mt.root)
		rel, ok := "", false
		switch {
		case root == "/":
			rel, ok = cgPath, true
		case cgPath == root:
			rel, ok = "/", true
		case strings.HasPrefix(cgPath, root+"/"):
			rel, ok = cgPath[len(root):], true
		}
		if !ok {
			if fallback == nil {
				fallback = mt
			}
			continue
		}
		return memCgroup{v2: v2, mount: mt.point, dir: joinFS(mt.point, rel)}, true
	}
	if fallback != nil {
		return memCgroup{v2: v2, mount: fallback.point, dir: fallback.point}, true
	}
	return memCgroup{}, false
}

// joinFS joins an fs.FS directory and an absolute cgroup path.
func joinFS(dir, abs string) string {
	rel := strings.TrimPrefix(path.Clean(abs), "/")
	if rel == "" {
		return dir
	}
	return path.Join(dir, rel)
}

// readCgroupMounts lists the cgroup and cgroup2 mounts in
// /proc/self/mountinfo. It returns nil, nil when the file does not exist.
func readCgroupMounts(fsys fs.FS) ([]cgroupMount, error) {
	data, err := readOptional(fsys, mountinfoFile)
	if err != nil || data == nil {
		return nil, err
	}
	mounts := []cgroupMount{}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 2 {
			return nil, fmt.Errorf("mem: /%s: malformed line %q", mountinfoFile, line)
		}
		var mt cgroupMount
		switch g[0] {
		case "cgroup2":
			mt.v2 = true
		case "cgroup":
			if len(g) < 3 || !hasController(g[2], "memory") {
				continue
			}
			mt.memory = true
		default:
			continue
		}
		mt.root = unescapeMountPath(f[3])
		mt.point = strings.TrimPrefix(path.Clean(unescapeMountPath(f[4])), "/")
		if mt.point == "" {
			mt.point = "."
		}
		mounts = append(mounts, mt)
	}
	return mounts, nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readOptional reads a file, returning nil, nil if it does not exist or may
// not be read: a missing cgroup or proc file only means less information.
func readOptional(fsys fs.FS, name string) ([]byte, error) {
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mem: %w", err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// readInt reads a file holding one decimal number. ok is false if the file
// does not exist. A value too large for int64 reads as math.MaxInt64.
func readInt(fsys fs.FS, name string) (v int64, ok bool, err error) {
	data, err := readOptional(fsys, name)
	if err != nil || data == nil {
		return 0, false, err
	}
	v, err = parseInt(string(bytes.TrimSpace(data)))
	if err != nil {
		return 0, false, fmt.Errorf("mem: /%s: %w", name, err)
	}
	return v, true, nil
}

func parseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return v, nil
	}
	if _, uerr := strconv.ParseUint(s, 10, 64); uerr == nil {
		return 1<<63 - 1, nil
	}
	return 0, fmt.Errorf("malformed number %q", s)
}

// readKeyValues reads a "key value" per line file such as memory.stat. It
// returns nil, nil if the file does not exist.
func readKeyValues(fsys fs.FS, name string) (map[string]int64, error) {
	data, err := readOptional(fsys, name)
	if err != nil || data == nil {
		return nil, err
	}
	kv := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("mem: /%s: malformed line %q", name, sc.Text())
		}
		v, err := parseInt(f[1])
		if err != nil {
			return nil, fmt.Errorf("mem: /%s: %s: %w", name, f[0], err)
		}
		kv[f[0]] = v
	}
	return kv, nil
}
