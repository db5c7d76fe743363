package series

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/manejo/manejo/internal/jsonstream"
)

// MaxItemBytes caps the JSON text of one STAC item of a catalog document
// (or of one line of newline-delimited items, or of any other member of an
// ItemCollection), whitespace outside strings not counted. Documents are
// read item by item, so memory grows with the largest item and the items
// kept, not with the document (issue 19 defect 12: a catalog read whole
// took 7× its size). An item over the cap is an error naming it.
const MaxItemBytes int64 = 16 << 20

// readDocument reads one catalog document from open (which it may call a
// second time): an ItemCollection or a single Item is streamed item by
// item; anything else — newline-delimited items, or a document that is
// not one JSON object — is read again line by line, each line an item on
// its own, so one bad line spoils only itself. Malformed items are
// reported and skipped.
func readDocument(open func() (io.ReadCloser, error), base string) ([]*Item, []error) {
	rc, err := open()
	if err != nil {
		return nil, []error{fmt.Errorf("open catalog %s: %w", base, err)}
	}
	items, errs, lines, err := streamDocument(rc, base)
	rc.Close()
	if err != nil {
		return nil, []error{fmt.Errorf("read catalog %s: %w", base, err)}
	}
	if !lines {
		return items, errs
	}
	if rc, err = open(); err != nil {
		return nil, []error{fmt.Errorf("open catalog %s: %w", base, err)}
	}
	defer rc.Close()
	return readLines(rc, base)
}

// streamDocument reads an ItemCollection or a single Item; lines is true
// when the document is neither (malformed JSON outside an ItemCollection's
// features, or more after the first JSON value): the caller then reads it
// as lines. Malformed JSON inside the features fails the document with
// one error naming the feature. err is a
// failed read, or an item over MaxItemBytes: the document is unusable.
func streamDocument(r io.Reader, base string) (items []*Item, errs []error, lines bool, err error) {
	d := jsonstream.NewDecoder(r, MaxItemBytes)
	items, errs, lines = streamObject(d, base)
	if err := d.ReadErr(); err != nil {
		return nil, nil, false, err
	}
	return items, errs, lines, nil
}

// streamObject is streamDocument's walk through the top-level object.
func streamObject(d *jsonstream.Decoder, base string) (items []*Item, errs []error, lines bool) {
	if d.Expect('{') != nil {
		return nil, nil, true
	}
	var typ string
	members := map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, true
		}
		key, _ := tok.(string)
		if strings.EqualFold(key, "features") {
			if items, errs, err = streamFeatures(d, base); err != nil {
				// An ItemCollection broken inside its features: its items
				// cannot be told apart any more, so none is used, and the
				// error says where (read as lines, every line would fail).
				return nil, []error{fmt.Errorf("parse catalog %s: features: %w: %w (none of the document's items is used)", base, err, ErrMalformedItem)}, false
			}
			continue
		}
		raw, err := d.Value("member " + key)
		if err != nil {
			return nil, nil, true
		}
		members[key] = raw
		if strings.EqualFold(key, "type") {
			_ = json.Unmarshal(raw, &typ)
		}
	}
	if d.Expect('}') != nil || d.End() != nil {
		return nil, nil, true
	}
	switch typ {
	case "FeatureCollection":
		return items, errs, false
	case "Feature":
		doc, _ := json.Marshal(members)
		it, err := parseItem(doc, base)
		if err != nil {
			return nil, []error{withIndex(err, 0, base)}, false
		}
		return []*Item{it}, nil, false
	}
	return nil, []error{fmt.Errorf("parse catalog %s: type %q is neither FeatureCollection nor Feature: %w", base, typ, ErrMalformedItem)}, false
}

// streamFeatures reads the features array (or null) item by item. A
// syntax error, or an item over MaxItemBytes, is err.
func streamFeatures(d *jsonstream.Decoder, base string) ([]*Item, []error, error) {
	tok, err := d.Token()
	if err != nil || tok == nil {
		return nil, nil, err
	}
	if tok != json.Delim('[') {
		return nil, nil, fmt.Errorf("features is %v, not an array", tok)
	}
	var (
		items []*Item
		errs  []error
	)
	for i := 0; d.More(); i++ {
		raw, err := d.Value(fmt.Sprintf("feature %d", i))
		if err != nil {
			return nil, nil, fmt.Errorf("feature %d: %w", i, err)
		}
		it, err := parseItem(raw, base)
		if err != nil {
			errs = append(errs, withIndex(err, i, base))
			continue
		}
		items = append(items, it)
	}
	return items, errs, d.Expect(']')
}

// readLines reads newline-delimited items, each line on its own (at most
// MaxItemBytes; a longer line ends the document with an error).
func readLines(r io.Reader, base string) ([]*Item, []error) {
	var (
		items []*Item
		errs  []error
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), int(MaxItemBytes))
	line := 0
	for sc.Scan() {
		line++
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		it, err := parseItem(l, base)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s line %d: %w", base, line, err))
			continue
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("read catalog %s line %d: %w", base, line+1, err))
	}
	return items, errs
}
