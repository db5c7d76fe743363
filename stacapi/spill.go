package stacapi

import (
	"fmt"
	"os"
)

// spill holds the documents of a search's items in a temporary file, so
// that a large answer costs disk, not memory. The file is unlinked as soon
// as it is created (it cannot outlive the process); size is where the
// next document goes, so a page read again overwrites what a failed
// attempt wrote.
type spill struct {
	f    *os.File
	size int64
}

// span is one document in a spill.
type span struct{ off, n int64 }

func (s *spill) add(doc []byte) (span, error) {
	if s.f == nil {
		f, err := os.CreateTemp("", "manejo-search-*.json")
		if err != nil {
			return span{}, fmt.Errorf("keep the search's items: %w", err)
		}
		os.Remove(f.Name())
		s.f = f
	}
	if _, err := s.f.WriteAt(doc, s.size); err != nil {
		return span{}, fmt.Errorf("keep the search's items: %w", err)
	}
	sp := span{s.size, int64(len(doc))}
	s.size += sp.n
	return sp, nil
}

func (s *spill) read(sp span) ([]byte, error) {
	b := make([]byte, sp.n)
	if _, err := s.f.ReadAt(b, sp.off); err != nil {
		return nil, fmt.Errorf("read back a search's item: %w", err)
	}
	return b, nil
}

func (s *spill) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
