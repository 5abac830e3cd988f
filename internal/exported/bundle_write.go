package exported

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteDir writes files into the new directory dir. It refuses a dir that exists and is not
// empty, and writes into a temporary sibling first, so that a failure leaves no half bundle.
func WriteDir(dir string, files []File) error {
	if err := refuseExisting(dir, true); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".partial-")
	if err != nil {
		return fmt.Errorf("write bundle %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write bundle %s: %w", dir, err)
	}
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write bundle %s: %w", dir, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("write bundle %s: %w", dir, err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write bundle %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write bundle %s: %w", dir, err)
	}
	done = true
	return nil
}

// WriteTarGz writes files as a gzipped tar at path, each under the directory top (so that
// extracting it makes one directory, a bundle). It refuses an existing path.
func WriteTarGz(path, top string, files []File, modTime time.Time) error {
	if err := refuseExisting(path, false); err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	dirs := map[string]bool{}
	mkdir := func(d string) error {
		if dirs[d] {
			return nil
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: modTime})
	}
	for _, f := range files {
		name := top + "/" + f.Name
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			if err := mkdir(strings.Join(parts[:i], "/")); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: modTime}); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := refuseExisting(path, false); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// refuseExisting fails when path exists (for a directory, when it is not empty): a bundle never
// replaces files.
func refuseExisting(path string, dir bool) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write bundle %s: %w", path, err)
	}
	if dir && st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return fmt.Errorf("write bundle %s: %w", path, err)
		}
		if len(entries) == 0 {
			return nil
		}
	}
	return fmt.Errorf("%s exists already: a bundle never replaces files; choose a new path, or move the old one away", path)
}
