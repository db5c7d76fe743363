// Package duckdbtest proves that the analysts' engine reads what manejo
// writes: it runs the pipeline on the demo's synthetic archive twice, as
// `make demo` does (one output, one file per dataset) and sharded (a folder
// of part files per dataset), reads every dataset of both with DuckDB,
// checks each column's type against the row types of export (the single
// definition of every column, which also generates the tables of
// docs/outputs.md), checks the GeoParquet footer of cells, and runs every
// SQL query of README.md and docs/*.md as written against both outputs
// (each must return rows), read from the documents at test time so that
// the documents and this test cannot drift apart (issue 28 point 6).
//
// It holds tests only: DuckDB (cgo, github.com/duckdb/duckdb-go/v2) is a test
// dependency, never linked into bin/manejo.
package duckdbtest

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/sinm"
)

// layout is an output the documents' queries run against: the folder
// holding it is the working directory and the output is called out, as
// the documents write it.
type layout struct {
	name   string
	shards int // 1: one file per dataset (make demo); n > 1: folders of n parts
}

// layouts are the demo's output and a sharded one.
var layouts = []layout{{"demo", 1}, {"sharded", 2}}

// demoArchive writes the archive of `make demo` (scripts/demo.sh: synth
// --seed 1, default revisit) into dir/archive.
func demoArchive(t *testing.T, dir string) string {
	t.Helper()
	archive := filepath.Join(dir, "archive")
	if _, err := synth.Generate(context.Background(), synth.Options{Out: archive, Seed: 1}); err != nil {
		t.Fatalf("synthetic archive: %v", err)
	}
	return archive
}

// demoRun runs the pipeline on the archive as scripts/demo.sh does, into
// out, in l.shards shards.
func demoRun(t *testing.T, archive, out string, l layout) {
	t.Helper()
	season, err := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.shards {
		cfg := pipeline.Config{
			Fields:  filepath.Join(archive, "talhoes.geojson"),
			Catalog: filepath.Join(archive, "catalog.json"),
			DEM:     filepath.Join(archive, "dem.tif"),
			Sowing:  filepath.Join(archive, "sowing.csv"),
			Out:     out,
			Season:  season,
			AsOf:    time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
			Codes:   sinm.SatelliteCodes{"sentinel-2-l2a": "S01", "dem": "S09"},
			Version: "test",
			Workers: 2,
		}
		if l.shards > 1 {
			cfg.Shard = pipeline.Shard{Index: i, Count: l.shards}
		}
		if _, err := pipeline.Run(context.Background(), cfg); err != nil {
			t.Fatalf("run %s %d/%d: %v", l.name, i, l.shards, err)
		}
	}
}

// duckType is the DuckDB type of a column whose Parquet type export names t
// (export.Column.Type, the type column of docs/outputs.md).
func duckType(t string) string {
	switch {
	case t == "DATE", t == "FLOAT", t == "DOUBLE", t == "BOOLEAN":
		return t
	case t == "INT32":
		return "INTEGER"
	case t == "INT64":
		return "BIGINT"
	case t == "STRING":
		return "VARCHAR"
	case t == "BINARY":
		return "BLOB"
	case t == "BINARY (WKB)":
		// DuckDB reads the GeoParquet primary column as a geometry, in the
		// CRS the metadata implies when it names none (docs/outputs.md).
		return "GEOMETRY('OGC:CRS84')"
	case strings.HasPrefix(t, "LIST<") && strings.HasSuffix(t, ">"):
		return duckType(t[len("LIST<"):len(t)-1]) + "[]"
	case strings.HasPrefix(t, "STRUCT<") && strings.HasSuffix(t, ">"):
		var parts []string
		for f := range strings.SplitSeq(t[len("STRUCT<"):len(t)-1], ", ") {
			name, typ, _ := strings.Cut(f, " ")
			parts = append(parts, name+" "+duckType(typ))
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	}
	return "unknown Parquet type " + t
}

// runDatasets are the datasets `manejo run` writes (classification.parquet
// comes from `manejo classify`, sinm_results.parquet and
// sinm_submissions.parquet from `manejo sinm`, later steps).
func runDatasets() []export.Dataset {
	var out []export.Dataset
	for _, d := range export.Datasets {
		if d.Name != export.Classification.Name && d.Name != export.SINMResults.Name && d.Name != export.SINMSubmissions.Name {
			out = append(out, d)
		}
	}
	return out
}

func TestDemoRunReadByDuckDB(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	archive := demoArchive(t, dir)
	docs := documentQueries(t)
	for _, l := range layouts {
		demoRun(t, archive, filepath.Join(dir, l.name, "out"), l)
	}
	t.Logf("demo runs: %v", time.Since(start).Round(time.Millisecond))

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version string
	if err := db.QueryRow("SELECT version()").Scan(&version); err == nil {
		t.Logf("DuckDB %s", version)
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			// The documents' paths are relative ('out/…'): run DuckDB
			// where the output folder is called out.
			t.Chdir(filepath.Join(dir, l.name))
			for _, d := range runDatasets() {
				checkTypes(t, db, d, l.shards)
			}
			checkGeo(t, db, l.shards)
			for _, q := range docs {
				if n := query(t, db, q.stmt); n == 0 {
					t.Errorf("%s example returned no row on the %s output:\n%s", q.doc, l.name, q.stmt)
				}
			}
		})
	}
	seriesDoc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "series.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "sharded"))
	t.Run("analyse", func(t *testing.T) { checkAnalyse(t, db, filepath.Join(dir, "sharded"), archive, string(seriesDoc)) })
	t.Logf("whole test: %v", time.Since(start).Round(time.Millisecond))
}

// repoRoot is the repository, from this package's folder.
var repoRoot = filepath.Join("..", "..")

// docQuery is one SQL statement of a document.
type docQuery struct{ doc, stmt string }

// documentQueries are the SQL statements of README.md and docs/*.md (code
// blocks, and inline code that reads a dataset), each as written; there
// must be some in README.md.
func documentQueries(t *testing.T) []docQuery {
	t.Helper()
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	docs = append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
	var out []docQuery
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, p)
		for _, s := range append(sqlStatements(string(b)), inlineQueries(string(b))...) {
			out = append(out, docQuery{filepath.ToSlash(name), s})
		}
	}
	if len(out) == 0 || out[0].doc != "README.md" {
		t.Fatal("README.md has no SQL example")
	}
	return out
}

// inlineRead matches inline code that reads a dataset with DuckDB:
// `read_parquet('…')`, or a whole `SELECT … FROM …`.
var inlineRead = regexp.MustCompile("`((?:SELECT [^`]* FROM [^`]*)|(?:read_parquet\\('[^'`]*'\\)))`")

// inlineQueries are a document's inline queries as statements: a
// read_parquet call is selected from.
func inlineQueries(doc string) []string {
	var out []string
	for _, m := range inlineRead.FindAllStringSubmatch(doc, -1) {
		q := m[1]
		if strings.HasPrefix(q, "read_parquet(") {
			q = "SELECT count(*) FROM " + q
		}
		out = append(out, strings.TrimSuffix(q, ";")+";")
	}
	return out
}

// checkTypes reads dataset d as one table over its part files and compares
// every column's DuckDB type with the one its row type declares.
func checkTypes(t *testing.T, db *sql.DB, d export.Dataset, shards int) {
	t.Helper()
	file := filepath.Join("out", d.File())
	parts := []string{file}
	if shards > 1 {
		parts, _ = filepath.Glob(filepath.Join(file, "*.parquet"))
	}
	if st, err := os.Stat(file); err != nil || st.IsDir() != (shards > 1) || len(parts) != shards {
		t.Errorf("%s: %d part files (%v), want %d", d.File(), len(parts), err, shards)
		return
	}
	glob := file // a file, or a folder of parts: DuckDB reads both as one table
	rows, err := db.Query(fmt.Sprintf("DESCRIBE SELECT * FROM read_parquet('%s')", glob))
	if err != nil {
		t.Errorf("%s: DuckDB cannot read it: %v", d.File(), err)
		return
	}
	defer rows.Close()
	got := map[string]string{}
	var order []string
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		name, typ := fmt.Sprint(vals[0]), fmt.Sprint(vals[1])
		got[name] = typ
		order = append(order, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range d.Columns() {
		want = append(want, c.Name)
		if w := duckType(c.Type); got[c.Name] != w {
			t.Errorf("%s.%s: DuckDB type %q, want %q (Parquet %s)", d.Name, c.Name, got[c.Name], w, c.Type)
		}
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("%s: DuckDB columns %v, want %v", d.Name, order, want)
	}
	var n int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", glob)).Scan(&n); err != nil {
		t.Errorf("%s: %v", d.Name, err)
	}
	t.Logf("%s: %d rows in %d parts, %d columns", d.Name, n, len(parts), len(order))
	if n == 0 && (d.Name == export.Cells.Name || d.Name == export.Observations.Name || d.Name == export.Indicators.Name) {
		t.Errorf("%s: no row", d.Name)
	}
}

// checkGeo reads the footer of every part of cells.parquet through DuckDB:
// each carries the GeoParquet 1.1 `geo` key naming geometry (WKB) as the
// primary column and bbox as its covering.
func checkGeo(t *testing.T, db *sql.DB, shards int) {
	glob := filepath.Join("out", export.Cells.File())
	rows, err := db.Query(fmt.Sprintf("SELECT file_name, decode(value) FROM parquet_kv_metadata('%s') WHERE decode(key) = 'geo' ORDER BY file_name", glob))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var file, value string
		if err := rows.Scan(&file, &value); err != nil {
			t.Fatal(err)
		}
		n++
		var geo struct {
			Version       string `json:"version"`
			PrimaryColumn string `json:"primary_column"`
			Columns       map[string]struct {
				Encoding string                         `json:"encoding"`
				Covering map[string]map[string][]string `json:"covering"`
			} `json:"columns"`
		}
		if err := json.Unmarshal([]byte(value), &geo); err != nil {
			t.Errorf("%s: geo key is not JSON: %v", file, err)
			continue
		}
		g := geo.Columns[geo.PrimaryColumn]
		if geo.Version != "1.1.0" || geo.PrimaryColumn != "geometry" || g.Encoding != "WKB" || len(g.Covering["bbox"]) != 4 {
			t.Errorf("%s: geo %s", file, value)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != shards {
		t.Errorf("%d cells parts carry the geo key, want %d", n, shards)
	}
}

// query runs one statement and returns its row count.
func query(t *testing.T, db *sql.DB, stmt string) int {
	t.Helper()
	rows, err := db.Query(stmt)
	if err != nil {
		t.Errorf("DuckDB: %v\n%s", err, stmt)
		return 0
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Errorf("DuckDB: %v\n%s", err, stmt)
	}
	t.Logf("%d rows: %s", n, strings.Join(strings.Fields(stmt), " "))
	return n
}

var sqlStart = regexp.MustCompile(`(?i)^\s*(SELECT|WITH|FROM|DESCRIBE|SUMMARIZE)\b`)

// sqlStatements returns the SQL statements of a Markdown document's code
// blocks (fenced, or indented by four spaces), as written: a block is SQL
// when its first line that is not a comment starts a query; statements end
// with a semicolon.
func sqlStatements(doc string) []string {
	var out []string
	for _, block := range codeBlocks(doc) {
		first := ""
		for l := range strings.SplitSeq(block, "\n") {
			if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "--") {
				first = s
				break
			}
		}
		if !sqlStart.MatchString(first) {
			continue
		}
		for s := range strings.SplitSeq(block, ";") {
			if hasCode(s) {
				out = append(out, strings.TrimSpace(s)+";")
			}
		}
	}
	return out
}

// hasCode reports whether s holds more than comments and blank lines.
func hasCode(s string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return true
		}
	}
	return false
}

// codeBlocks returns the code blocks of a Markdown document: fenced ones
// (``` or ~~~) and indented ones (four spaces after a blank line, outside a
// fence), with the indentation removed.
func codeBlocks(doc string) []string {
	var blocks []string
	var cur []string
	fence, indented, prevBlank := "", false, true
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur, indented = nil, false
	}
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				flush()
				fence = ""
			} else {
				cur = append(cur, l)
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			flush()
			fence = trimmed[:3]
		case strings.HasPrefix(l, "    ") && (indented || prevBlank):
			indented = true
			cur = append(cur, strings.TrimPrefix(l, "    "))
		case indented && trimmed == "":
			cur = append(cur, "")
		default:
			flush()
		}
		prevBlank = trimmed == ""
	}
	flush()
	return blocks
}
