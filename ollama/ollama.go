// Package ollama finds models that Ollama has already downloaded, so they
// can be used in place: "ollama:NAME[:TAG]" resolves to the GGUF blob in the
// local store.
//
// The store is $OLLAMA_MODELS, or ~/.ollama/models. A model's manifest is
// manifests/<registry>/<namespace>/<name>/<tag> (registry.ollama.ai and
// library by default); its layer of media type
// application/vnd.ollama.image.model names the GGUF blob,
// blobs/sha256-<hex>; those of type application/vnd.ollama.image.adapter
// (a Modelfile's ADAPTER) name its LoRA adapters' GGUF blobs (Adapters).
//
// Example:
//
//	path, err := ollama.Resolve("ollama:llama3.2:3b")
//	if err != nil { ... } // errors.Is(err, ollama.ErrNotFound) lists what is there
//	m, err := llm.Load(path)
package ollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Prefix marks a model reference that Resolve understands.
const Prefix = "ollama:"

// Errors callers can branch on.
var (
	// ErrNotFound: no such model in the store (the message lists the ones
	// that are there).
	ErrNotFound = errors.New("ollama: model not found")
	// ErrNoStore: there is no Ollama model store.
	ErrNoStore = errors.New("ollama: no model store")
	// ErrBadManifest: the manifest or blob is missing or malformed.
	ErrBadManifest = errors.New("ollama: bad manifest")
	// ErrBadName: the reference is not NAME[:TAG].
	ErrBadName = errors.New("ollama: bad model name")
)

// The media types of a manifest's layers this package reads.
const (
	modelMediaType   = "application/vnd.ollama.image.model"
	adapterMediaType = "application/vnd.ollama.image.adapter"
)

// IsRef reports whether s is an "ollama:" reference.
func IsRef(s string) bool { return strings.HasPrefix(s, Prefix) }

// Dir returns the model store: $OLLAMA_MODELS or ~/.ollama/models.
func Dir() (string, error) {
	if d := os.Getenv("OLLAMA_MODELS"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: no home directory to find ~/.ollama/models: %v", ErrNoStore, err)
	}
	return filepath.Join(home, ".ollama", "models"), nil
}

// Path returns the file a model argument names: an "ollama:" reference
// resolved (Resolve), anything else, and an existing file whose name only
// looks like a reference, unchanged. It is how every -m flag and llm.Load
// read a model argument.
func Path(arg string) (string, error) {
	if !IsRef(arg) {
		return arg, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	return Resolve(arg)
}

// Resolve turns "ollama:NAME[:TAG]" (or just NAME[:TAG]) into the path of
// the model's GGUF blob in the store returned by Dir.
func Resolve(ref string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return ResolveIn(dir, ref)
}

var partRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ResolveIn is Resolve with an explicit store directory.
func ResolveIn(dir, ref string) (string, error) {
	m, err := ResolveModelIn(dir, ref)
	return m.Path, err
}

// Model is what a manifest names: the GGUF blob of the model and, in
// order, those of its LoRA adapters (layers of media type
// application/vnd.ollama.image.adapter, a Modelfile's ADAPTER).
type Model struct {
	Path     string
	Adapters []string
}

// Adapters returns the LoRA adapter blobs of the model a model argument
// names: none for a plain file (or an existing file whose name only
// looks like a reference), else its manifest's adapter layers (Resolve).
func Adapters(arg string) ([]string, error) {
	if !IsRef(arg) {
		return nil, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return nil, nil
	}
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	m, err := ResolveModelIn(dir, arg)
	return m.Adapters, err
}

// ResolveModelIn is ResolveIn returning the adapters' blobs too.
func ResolveModelIn(dir, ref string) (Model, error) {
	name := strings.TrimPrefix(ref, Prefix)
	registry, namespace := "registry.ollama.ai", "library"
	tag := "latest"
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		name, tag = name[:i], name[i+1:]
	}
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
	case 2:
		namespace = parts[0]
	case 3:
		registry, namespace = parts[0], parts[1]
	default:
		return Model{}, fmt.Errorf("%w: %q: want NAME[:TAG], NAMESPACE/NAME[:TAG] or HOST/NAMESPACE/NAME[:TAG]", ErrBadName, ref)
	}
	model := parts[len(parts)-1]
	for _, p := range []string{registry, namespace, model, tag} {
		if !partRe.MatchString(p) {
			return Model{}, fmt.Errorf("%w: %q", ErrBadName, ref)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Model{}, fmt.Errorf("%w at %s (set OLLAMA_MODELS to the directory holding manifests/ and blobs/)", ErrNoStore, dir)
	}
	manifest := filepath.Join(dir, "manifests", registry, namespace, model, tag)
	b, err := os.ReadFile(manifest)
	if errors.Is(err, fs.ErrNotExist) {
		have := List(dir)
		list := "the store has no models"
		if len(have) > 0 {
			list = "the store has: " + strings.Join(have, ", ")
		}
		return Model{}, fmt.Errorf("%w: %s:%s in %s; %s", ErrNotFound, shortName(registry, namespace, model), tag, dir, list)
	}
	if err != nil {
		return Model{}, fmt.Errorf("%w: %s: %v", ErrBadManifest, manifest, err)
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Model{}, fmt.Errorf("%w: %s: %v", ErrBadManifest, manifest, err)
	}
	var out Model
	for _, l := range m.Layers {
		if l.MediaType != modelMediaType && l.MediaType != adapterMediaType {
			continue
		}
		blob, err := blobPath(dir, manifest, l.Digest)
		if err != nil {
			return Model{}, err
		}
		if l.MediaType == adapterMediaType {
			out.Adapters = append(out.Adapters, blob)
		} else if out.Path == "" {
			out.Path = blob
		}
	}
	if out.Path == "" {
		return Model{}, fmt.Errorf("%w: %s has no layer of type %s (not a language model?)", ErrBadManifest, manifest, modelMediaType)
	}
	return out, nil
}

var digestRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// blobPath is the blob a layer's digest names, which must be a regular
// file of the store.
func blobPath(dir, manifest, digest string) (string, error) {
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok || algo != "sha256" || !digestRe.MatchString(hex) {
		return "", fmt.Errorf("%w: %s: layer digest %q", ErrBadManifest, manifest, digest)
	}
	blob := filepath.Join(dir, "blobs", "sha256-"+hex)
	st, err := os.Stat(blob)
	if err != nil {
		return "", fmt.Errorf("%w: %s names blob %s, which is missing: %v", ErrBadManifest, manifest, blob, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%w: blob %s is not a regular file", ErrBadManifest, blob)
	}
	return blob, nil
}

func shortName(registry, namespace, model string) string {
	switch {
	case registry != "registry.ollama.ai":
		return registry + "/" + namespace + "/" + model
	case namespace != "library":
		return namespace + "/" + model
	}
	return model
}

// List returns the models in a store as NAME:TAG, sorted.
func List(dir string) []string {
	root := filepath.Join(dir, "manifests")
	var out []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		p := strings.Split(filepath.ToSlash(rel), "/")
		if len(p) != 4 {
			return nil
		}
		out = append(out, shortName(p[0], p[1], p[2])+":"+p[3])
		return nil
	})
	sort.Strings(out)
	return out
}
