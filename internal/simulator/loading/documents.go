package loading

import "sync"

// Documents are the files' documents as JSON, kept by path between loads
// of the same files (the files do not change while a command runs). It
// is safe for concurrent use.
type Documents struct {
	mu    sync.Mutex
	files map[string][]document
	// paths are the files each path given named (a folder's files).
	paths map[string][]string
}

// document is a document as decodeDocument read it: JSON, and whether
// it is known valid.
type document struct {
	json  []byte
	valid bool
}

// NewDocuments returns an empty keep of documents.
func NewDocuments() *Documents {
	return &Documents{files: map[string][]document{}, paths: map[string][]string{}}
}

// manifestFiles is manifestFiles, the first answer for each path kept.
func (d *Documents) manifestFiles(p string) ([]string, error) {
	if d == nil {
		return manifestFiles(p)
	}
	d.mu.Lock()
	files, ok := d.paths[p]
	d.mu.Unlock()
	if ok {
		return files, nil
	}
	files, err := manifestFiles(p)
	if err == nil {
		d.mu.Lock()
		d.paths[p] = files
		d.mu.Unlock()
	}
	return files, err
}

func (d *Documents) get(path string) ([]document, bool) {
	if d == nil {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	docs, ok := d.files[path]
	return docs, ok
}

func (d *Documents) put(path string, docs []document) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.files[path] = docs
}
