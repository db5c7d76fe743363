package client

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/manejo/manejo/export"
)

// Statuses of a sinm_results row.
const (
	StatusPending  = "pending"  // SINM answered 404: not classified yet
	StatusComplete = "complete" // SINM's classification was read
	StatusError    = "error"    // it could not be read
)

// Status reads back SINM's classification and its racional for every
// talhão the ledger says was delivered, with the key keys gives it, and
// compares them with the local preview (rows of classification.parquet;
// nil: nothing compared). A 404 is pending, not an error; a 403 stops
// (ErrForbidden). Rows come sorted by field id.
func Status(ctx context.Context, c *Client, led *Ledger, keys map[string]string, preview []export.ClassificationRow) ([]export.SINMResultRow, error) {
	pre := map[string]export.ClassificationRow{}
	for _, p := range preview {
		pre[p.FieldID] = p
	}
	ids := led.Fields()
	slices.Sort(ids)
	var rows []export.SINMResultRow
	for _, id := range ids {
		d := led.State(id).Delivered
		if d == nil {
			continue
		}
		row := export.SINMResultRow{FieldID: id, Key: d.KeyPrefix, SubmissionUUID: d.UUID, Status: StatusError}
		key := keys[id]
		if key == "" || KeyHash(key) != d.KeySHA256 {
			row.Error = "the keys CSV has no key, or another key, for the delivered submission"
			rows = append(rows, row)
			continue
		}
		scores, err := readBack(ctx, c, key, &row)
		c.cleanRow(&row, key)
		if err != nil {
			return rows, c.cleanErr(err, key)
		}
		if p, ok := pre[id]; ok && row.Status == StatusComplete {
			row.PreviewLevel = p.Level
			row.Differences = compare(row, scores, p)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// readBack fills row from GET classificacoes/{key} and its racional, and
// returns the indicator scores (scoreParcial) by preview indicator. An
// answer without a level manejo can read is an error naming what it holds
// (issue 27 D20), its racional still read.
func readBack(ctx context.Context, c *Client, key string, row *export.SINMResultRow) (map[string]float64, error) {
	path := "/api/v1/classificacoes/" + url.PathEscape(key)
	resp, err := c.request(ctx, http.MethodGet, path, nil, key)
	row.HTTPCode = int32(resp.Code)
	switch {
	case stops(err) || ctx.Err() != nil:
		return nil, err
	case err != nil:
		row.Error = err.Error()
		return nil, nil
	case resp.Code == http.StatusNotFound:
		row.Status = StatusPending
		return nil, nil
	case resp.Code != http.StatusOK:
		row.Error = strings.Join(parseProblem(resp.Code, resp.Body, key), "; ")
		return nil, nil
	}
	row.Status = StatusComplete
	var found string
	if row.Level, found = levelOf(resp.Body); row.Level == nil {
		row.Status, row.Error = StatusError, "SINM's classification has no level manejo can read ("+found+")"
	}
	resp, err = c.request(ctx, http.MethodGet, path+"/racional", nil, key)
	switch {
	case stops(err) || ctx.Err() != nil:
		return nil, err
	case err != nil:
		addError(row, "racional: "+err.Error())
	case resp.Code != http.StatusOK:
		addError(row, "racional: "+strings.Join(parseProblem(resp.Code, resp.Body, key), "; "))
	default:
		return fillRacional(resp.Body, row), nil
	}
	return nil, nil
}

// addError appends msg to row.Error.
func addError(row *export.SINMResultRow, msg string) {
	if row.Error != "" {
		msg = row.Error + "; " + msg
	}
	row.Error = msg
}

// cleanRow passes the row's texts from SINM through Client.clean.
func (c *Client) cleanRow(row *export.SINMResultRow, key string) {
	row.Error = c.clean(row.Error, key)
	row.Indicators = c.cleanAll(row.Indicators, key)
	row.Restrictive = c.cleanAll(row.Restrictive, key)
}

// levelFields are the names under which a classification answer may carry
// its level ("NM3", "3" or 3); the first present wins.
var levelFields = []string{"nivelManejo", "nivel", "nivelManejoFinal", "nivelFinal", "classificacao"}

// levelOf reads SINM's level from a classification answer. Without one it
// returns nil and what it found instead: the first level field present and
// its value, or that there is none.
func levelOf(body []byte) (*int32, string) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil, "the answer is not a JSON object"
	}
	found := "none of " + strings.Join(levelFields, ", ")
	for i := len(levelFields) - 1; i >= 0; i-- {
		if v, ok := m[levelFields[i]]; ok {
			b, _ := json.Marshal(v)
			found = fmt.Sprintf("%s: %s", levelFields[i], b)
		}
	}
	for _, f := range levelFields {
		switch v := m[f].(type) {
		case float64:
			if v >= 1 && v <= 4 && v == math.Trunc(v) {
				return new(int32(v)), ""
			}
		case string:
			n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(v)), "NM"))
			if err == nil && n >= 1 && n <= 4 {
				return new(int32(n)), ""
			}
		}
	}
	return nil, found
}

// racional is the shape of GET classificacoes/{key}/racional.
type racional struct {
	ScoreFinal  *float64 `json:"scoreFinal"`
	ScoreMedio  *float64 `json:"scoreMedio"`
	Indicadores []struct {
		Nome         string   `json:"nome"`
		Origem       string   `json:"origem"`
		Valor        any      `json:"valor"`
		Unidade      string   `json:"unidade"`
		Faixa        any      `json:"faixa"`
		ScoreParcial *float64 `json:"scoreParcial"`
	} `json:"indicadores"`
	FatoresRestritivos []any `json:"fatoresRestritivos"`
}

// fillRacional copies the racional into row, one string per indicator, and
// returns the scores of the indicators it recognises (indicatorOf).
func fillRacional(body []byte, row *export.SINMResultRow) map[string]float64 {
	var r racional
	if err := json.Unmarshal(body, &r); err != nil {
		addError(row, "racional: not the expected JSON")
		return nil
	}
	scores := map[string]float64{}
	row.ScoreFinal, row.ScoreMedio = r.ScoreFinal, r.ScoreMedio
	for _, i := range r.Indicadores {
		s := fmt.Sprintf("%s = %v %s (%v)", i.Nome, i.Valor, i.Unidade, i.Faixa)
		if i.ScoreParcial != nil {
			s += fmt.Sprintf(" score %v", *i.ScoreParcial)
		}
		if i.Origem != "" {
			s += ", " + i.Origem
		}
		if code := indicatorOf(i.Nome); code != "" && i.ScoreParcial != nil {
			scores[code] = *i.ScoreParcial
			s += " [" + code + "]"
		}
		row.Indicators = append(row.Indicators, s)
	}
	for _, f := range r.FatoresRestritivos {
		b, _ := json.Marshal(f)
		s := string(b)
		if str, ok := f.(string); ok {
			s = str
		}
		row.Restrictive = append(row.Restrictive, s)
	}
	return scores
}
