package client

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

// LedgerName is the ledger's path in an output folder.
const LedgerName = "sinm/submissions.jsonl"

// Ledger record kinds: an intent is written (and synced) before a request,
// its result after the answer. An intent without a result is a request
// whose fate is unknown (the process died or was cancelled mid-way).
const (
	OpIntent = "intent"
	OpResult = "result"
)

// Record is one line of the ledger. The key is never stored: KeyPrefix
// (Redact) to read, KeySHA256 to recognise it.
type Record struct {
	Time          time.Time `json:"time"`
	Op            string    `json:"op"`
	ID            string    `json:"id"` // links an intent with its result
	FieldID       string    `json:"field_id"`
	KeyPrefix     string    `json:"key"`
	KeySHA256     string    `json:"key_sha256"`
	PayloadSHA256 string    `json:"payload_sha256"`
	Bytes         int       `json:"bytes,omitempty"`
	Method        string    `json:"method"`                  // POST or PUT
	ReplacesUUID  string    `json:"replaces_uuid,omitempty"` // PUT target, or the earlier uuid a POST supersedes
	Recovered     bool      `json:"recovered,omitempty"`     // sent again after an intent without result
	Code          int       `json:"code,omitempty"`          // HTTP status of the final answer; 0: none
	UUID          string    `json:"uuid,omitempty"`
	Errors        []string  `json:"errors,omitempty"` // scrubbed messages
	// Parts summarise the payload's members (personal data left out), so
	// that a later submit can say what changed; intents only.
	Parts map[string]Part `json:"parts,omitempty"`
}

// OK reports whether a result record is a delivery (2xx).
func (r Record) OK() bool { return r.Op == OpResult && r.Code >= 200 && r.Code < 300 }

// FieldState is what the ledger knows of one talhão.
type FieldState struct {
	Delivered  *Record // latest 2xx result
	Unresolved *Record // latest intent without a result, if after Delivered
	Last       *Record // latest result of any code
}

// Ledger is the append-only submissions file of one output folder.
type Ledger struct {
	path    string
	mu      sync.Mutex
	f       *os.File
	state   map[string]*FieldState
	intents map[string]Record // open intents by id
	records []Record          // every record, in file order
	Skipped int               // unreadable lines (a line cut by a kill)
}

// ErrLedgerBusy is a ledger another process (another `manejo sinm submit`
// on the same output folder) holds open for appending. Two of them would
// both read "not delivered" and both POST (issue 27 D6).
var ErrLedgerBusy = errors.New("sinm: the ledger is in use by another sinm submit")

// OpenLedger opens the ledger at path for appending, holding an exclusive
// lock on it until Close (storage.TryLock: released by the kernel when the
// process dies, so a kill leaves no stale lock), then reads it
// (ReadLedger). A ledger another process holds is ErrLedgerBusy, at once:
// nothing is read or sent.
func OpenLedger(path string) (*Ledger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("ledger folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	if err := storage.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (one submit at a time per output folder; run it again when the other ends)", ErrLedgerBusy, path)
		}
		return nil, fmt.Errorf("lock ledger: %w", err)
	}
	l, cut, err := readLedger(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	if cut { // a line cut by a kill must not glue onto the next record
		if _, err := f.WriteString("\n"); err != nil {
			f.Close()
			return nil, fmt.Errorf("open ledger: %w", err)
		}
	}
	l.f = f
	return l, nil
}

// ReadLedger reads the ledger at path (missing: empty) without opening it
// for writing (Append fails) or locking it. Lines of any length are read;
// a line that is not a record (the last line cut short by a kill) is
// counted in Skipped and otherwise ignored.
func ReadLedger(path string) (*Ledger, error) {
	l, _, err := readLedger(path)
	return l, err
}

func readLedger(path string) (*Ledger, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read ledger: %w", err)
	}
	l := parseLedger(data)
	l.path = path
	return l, len(data) > 0 && data[len(data)-1] != '\n', nil
}

// parseLedger folds the records of a ledger's bytes, one per line.
func parseLedger(data []byte) *Ledger {
	l := &Ledger{state: map[string]*FieldState{}, intents: map[string]Record{}}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if json.Unmarshal(line, &r) != nil || r.ID == "" {
			l.Skipped++
			continue
		}
		l.apply(r)
	}
	return l
}

// Close closes the file.
func (l *Ledger) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// apply folds one record into the state.
func (l *Ledger) apply(r Record) {
	l.records = append(l.records, r)
	st := l.state[r.FieldID]
	if st == nil {
		st = &FieldState{}
		l.state[r.FieldID] = st
	}
	rec := r
	switch r.Op {
	case OpIntent:
		l.intents[r.ID] = r
		st.Unresolved = &rec
	case OpResult:
		if rec.Parts == nil {
			rec.Parts = l.intents[r.ID].Parts // what was delivered, for the next submit's changes
		}
		delete(l.intents, r.ID)
		if st.Unresolved != nil && st.Unresolved.ID == r.ID {
			st.Unresolved = nil
		}
		st.Last = &rec
		if r.OK() {
			st.Delivered = &rec
		}
	}
}

// State returns what the ledger knows of a talhão (zero: nothing).
func (l *Ledger) State(fieldID string) FieldState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.state[fieldID]; st != nil {
		return *st
	}
	return FieldState{}
}

// Fields returns the talhões the ledger knows, in no order.
func (l *Ledger) Fields() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.state))
	for id := range l.state {
		out = append(out, id)
	}
	return out
}

// Append writes r as one line and syncs the file before returning, so a
// record that Append returned for survives a kill.
func (l *Ledger) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC().Round(time.Microsecond)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("sinm: ledger opened read-only")
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("append to ledger: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync ledger: %w", err)
	}
	l.apply(r)
	return nil
}

// newID returns a random submission id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Rows returns every record as rows of sinm_submissions.parquet, sorted by
// field and time.
func (l *Ledger) Rows() []export.SINMSubmissionRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]export.SINMSubmissionRow, len(l.records))
	for i, r := range l.records {
		out[i] = export.SINMSubmissionRow{FieldID: r.FieldID, Time: r.Time.UTC().Format(time.RFC3339Nano), Op: r.Op, ID: r.ID,
			Key: r.KeyPrefix, KeySHA256: r.KeySHA256, PayloadSHA256: r.PayloadSHA256, Bytes: int64(r.Bytes), Method: r.Method,
			ReplacesUUID: r.ReplacesUUID, Recovered: r.Recovered, Code: int32(r.Code), UUID: r.UUID, Errors: r.Errors}
	}
	return export.Sorted(out)
}
