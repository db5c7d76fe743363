package export

import "strings"

// Reason is one entry of IndicatorRow.Reasons, typed: what it concerns,
// a code and the detail people read. Its text (String) is what the reasons
// column of indicators.parquet holds; ParseReason reads the subject back
// from that text (the code is not stored: it is known only where the
// reason is made). This file is the one place that writes and reads the
// text's form, so no other package parses it.
type Reason struct {
	// Subject is the indicator or input the reason concerns (SubjectT,
	// SubjectC...); empty for a reason of its own (an invalid
	// identifier's, which names the talhão).
	Subject Subject
	Code    ReasonCode
	Detail  string
}

// Subject is what a Reason concerns; its text prefixes the reason's
// ("T: ...").
type Subject string

// Subjects of a Reason.
const (
	SubjectT      Subject = "T"      // time without soil revolving
	SubjectC      Subject = "C"      // straw cover
	SubjectSlope  Subject = "slope"  // the DEM's slope
	SubjectSeries Subject = "series" // the time series (IN 6.5's revisit)
	SubjectSINM   Subject = "sinm"   // the SINM payload
	SubjectArea   Subject = "area"   // the talhão's area
	SubjectCrop   Subject = "crop"   // the talhão's crop
)

// subjects are the subjects ParseReason recognises.
var subjects = []Subject{SubjectT, SubjectC, SubjectSlope, SubjectSeries, SubjectSINM, SubjectArea, SubjectCrop}

// ReasonCode says which case of its subject a Reason is.
type ReasonCode string

// Codes of a Reason.
const (
	CodeNoObservation ReasonCode = "no-observation" // T or C: no clear observation in the archive
	CodeUndecided     ReasonCode = "undecided"      // T: the history does not decide the level
	CodeNearestStep   ReasonCode = "nearest-step"   // T: how near a talhão without an event came to a step
	CodeNearestLevel  ReasonCode = "nearest-level"  // T: how near its window's residue cover came to a low-residue event
	CodeMissing       ReasonCode = "missing"        // C: some season's cover is missing
	CodeNoDEM         ReasonCode = "no-dem"         // slope: no usable DEM
	CodeDEMStuck      ReasonCode = "dem-stuck"      // slope: the DEM stopped answering
	CodeSlopeFailed   ReasonCode = "slope-failed"   // slope: the DEM read failed
	CodeSlopeWarning  ReasonCode = "slope-warning"  // slope: read, with a warning
	CodeCoarseRevisit ReasonCode = "coarse-revisit" // series: revisit over 16 days (IN 6.5)
	CodeInvalidID     ReasonCode = "invalid-id"     // a CPF or CNPJ left out of the payload
	CodePayloadFailed ReasonCode = "payload-failed" // sinm: the payload could not be built
	CodeUnknownArea   ReasonCode = "unknown-area"   // area: not given by the observation table
	CodeUnknownCrop   ReasonCode = "unknown-crop"   // crop: not one ZARC knows
)

// String is the reason's text: "subject: detail", or the detail alone
// without a subject.
func (r Reason) String() string {
	if r.Subject == "" {
		return r.Detail
	}
	return string(r.Subject) + ": " + r.Detail
}

// ParseReason reads a reason's text back (String's inverse but for the
// code, which the text does not hold). A text without a known subject
// prefix is a reason of its own: Subject empty, Detail the whole text.
func ParseReason(s string) Reason {
	for _, sub := range subjects {
		if d, ok := strings.CutPrefix(s, string(sub)+": "); ok {
			return Reason{Subject: sub, Detail: d}
		}
	}
	return Reason{Detail: s}
}

// ReasonTexts returns the texts of rs, as IndicatorRow.Reasons holds them.
func ReasonTexts(rs []Reason) []string {
	if rs == nil {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

// ParseReasons reads IndicatorRow.Reasons back (ParseReason).
func ParseReasons(texts []string) []Reason {
	out := make([]Reason, len(texts))
	for i, s := range texts {
		out[i] = ParseReason(s)
	}
	return out
}

// notClassifiable begins the reason of a talhão without a management
// level (ClassificationRow.Reason).
const notClassifiable = "not classifiable"

// NotClassifiable returns the reason of a talhão without a management
// level: "not classifiable" and then detail, which brings its own
// punctuation (" (Portaria 349 3.4): effective depth below Ze").
func NotClassifiable(detail string) string { return notClassifiable + detail }

// LevelReason returns why the talhão has no level as a sentence that says
// so: Reason as NotClassifiable wrote it, or another reason after "not
// classifiable — ".
func (r ClassificationRow) LevelReason() string {
	if strings.HasPrefix(r.Reason, notClassifiable) {
		return r.Reason
	}
	return notClassifiable + " — " + r.Reason
}
