package pkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// image is an OCI image tarball as go-containerregistry writes it.
type image struct {
	config struct {
		Config struct {
			Entrypoint []string `json:"Entrypoint"`
			User       string   `json:"User"`
		} `json:"config"`
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	}
	files map[string][]byte // every regular file of every layer
}

func readImage(t *testing.T, path string) *image {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (make xpkg builds the packages)", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		blobs[h.Name] = b
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(blobs["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s has no single image manifest: %v", path, err)
	}
	img := &image{files: map[string][]byte{}}
	if err := json.Unmarshal(blobs[manifest[0].Config], &img.config); err != nil {
		t.Fatal(err)
	}
	for _, l := range manifest[0].Layers {
		var r io.Reader = bytes.NewReader(blobs[l])
		if gz, err := gzip.NewReader(bytes.NewReader(blobs[l])); err == nil {
			r = gz
		}
		lt := tar.NewReader(r)
		for {
			h, err := lt.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeReg {
				b, _ := io.ReadAll(lt)
				img.files[strings.TrimPrefix(h.Name, "/")] = b
			}
		}
	}
	return img
}

// objects splits package.yaml into apiVersion/kind/name triples and documents.
func objects(t *testing.T, img *image) map[string]map[string]any {
	t.Helper()
	body, ok := img.files["package.yaml"]
	if !ok {
		t.Fatal("no package.yaml in the package")
	}
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(string(body), "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil || o == nil {
			continue
		}
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		out[o["kind"].(string)+"/"+name] = o
	}
	return out
}

// archs are the platforms (linux/<arch>) every runtime image is built for,
// with the ELF machine each one's binary must be built for.
var archs = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func TestProviderPackage(t *testing.T) {
	for arch, machine := range archs {
		t.Run(arch, func(t *testing.T) {
			img := readImage(t, filepath.Join(os.Getenv("XPKG_DIR"), "provider-eventing-auth-"+arch+".xpkg"))
			objs := objects(t, img)
			meta, ok := objs["Provider/provider-eventing-auth"]
			if !ok {
				t.Fatalf("no Provider metadata in package.yaml; objects: %v", keys(objs))
			}
			spec := meta["spec"].(map[string]any)
			if caps, _ := spec["capabilities"].([]any); !slices.Contains(caps, any("safe-start")) {
				t.Errorf("the Provider lacks the safe-start capability: %v", spec["capabilities"])
			}
			for _, crd := range []string{
				"providerconfigs.eventingauth.kyma-project.io", "providerconfigusages.eventingauth.kyma-project.io",
				"clusterproviderconfigs.eventingauth.kyma-project.io", "clusterproviderconfigusages.eventingauth.kyma-project.io",
				"iasapplications.ias.eventingauth.kyma-project.io", "runtimesecrets.runtime.eventingauth.kyma-project.io",
			} {
				if _, ok := objs["CustomResourceDefinition/"+crd]; !ok {
					t.Errorf("CRD %s is not in the package", crd)
				}
			}
			for k := range objs {
				if strings.HasPrefix(k, "CompositeResourceDefinition/") || strings.HasPrefix(k, "Composition/") {
					t.Errorf("the provider package carries %s, which belongs to the Configuration", k)
				}
			}
			checkRuntimeImage(t, img, "usr/local/bin/provider", arch, machine)
		})
	}
}

func TestFunctionPackage(t *testing.T) {
	for arch, machine := range archs {
		t.Run(arch, func(t *testing.T) {
			img := readImage(t, filepath.Join(os.Getenv("XPKG_DIR"), "function-eventing-auth-"+arch+".xpkg"))
			if _, ok := objects(t, img)["Function/function-eventing-auth"]; !ok {
				t.Errorf("no Function metadata in package.yaml; objects: %v", keys(objects(t, img)))
			}
			checkRuntimeImage(t, img, "usr/local/bin/function", arch, machine)
		})
	}
}

// checkRuntimeImage checks the runtime image embedded in a package: for
// linux/arch, its entrypoint a static Go binary at path built for that
// machine, CA certificates beside it, run as a non-root user.
func checkRuntimeImage(t *testing.T, img *image, path, arch string, machine elf.Machine) {
	t.Helper()
	if c := img.config.Config; !slices.Equal(c.Entrypoint, []string{"/" + path}) || c.User != "65532:65532" {
		t.Errorf("runtime image entrypoint %v user %q", c.Entrypoint, c.User)
	}
	if img.config.OS != "linux" || img.config.Architecture != arch {
		t.Errorf("runtime image is for %s/%s, want linux/%s", img.config.OS, img.config.Architecture, arch)
	}
	b := img.files[path]
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil || len(b) < 1<<20 {
		t.Fatalf("no binary at %s in the runtime image (%d bytes): %v", path, len(b), err)
	}
	if f.Machine != machine {
		t.Errorf("the binary at %s is built for %s, want %s", path, f.Machine, machine)
	}
	if !bytes.Contains(img.files["etc/ssl/certs/ca-certificates.crt"], []byte("BEGIN CERTIFICATE")) {
		t.Error("no CA certificates in the runtime image: IAS could not be reached over TLS")
	}
}

func TestConfigurationPackage(t *testing.T) {
	img := readImage(t, filepath.Join(os.Getenv("XPKG_DIR"), "configuration-eventing-auth.xpkg"))
	objs := objects(t, img)
	meta, ok := objs["Configuration/configuration-eventing-auth"]
	if !ok {
		t.Fatalf("no Configuration metadata in package.yaml; objects: %v", keys(objs))
	}
	var deps []string
	for _, d := range meta["spec"].(map[string]any)["dependsOn"].([]any) {
		for _, k := range []string{"provider", "function"} {
			if v, ok := d.(map[string]any)[k].(string); ok {
				deps = append(deps, k+" "+v)
			}
		}
	}
	slices.Sort(deps)
	want := []string{
		"function ghcr.io/kyma-project/function-eventing-auth",
		"provider ghcr.io/kyma-project/provider-eventing-auth",
	}
	if !slices.Equal(deps, want) {
		t.Errorf("dependsOn %v, want %v", deps, want)
	}
	for _, k := range []string{"CompositeResourceDefinition/eventingauths.composite.eventingauth.kyma-project.io", "Composition/eventingauth"} {
		if _, ok := objs[k]; !ok {
			t.Errorf("%s is not in the package; objects: %v", k, keys(objs))
		}
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
