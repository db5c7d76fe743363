package series

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/manejo/manejo/storage"
)

// The trust rule for asset hrefs (docs/security.md). A catalog is data
// written by someone else: its hrefs decide which files and URLs the worker
// opens with its own credentials. So every href is parsed and normalized
// before it is matched or opened, and it is opened by the normalized name
// it was matched by:
//
//   - local paths (plain or file://) are made absolute, cleaned of "." and
//     "..", and their symlinks resolved; only regular files are opened (a
//     FIFO or device would block the read forever);
//   - s3:// and https:// URLs (and http:// on a loopback host: a local
//     mirror, proxy or test server) are parsed: userinfo, encoded dots or slashes
//     and backslashes are refused, the path is cleaned, scheme and host are
//     lowercased and a default port dropped; other schemes and GDAL /vsi…
//     paths are refused;
//   - a rule (an allowed prefix) admits an href of the same scheme and host
//     (bucket, host:port) whose path is the rule's path or lies below it,
//     compared by whole path segments: "/data/a" admits "/data/a/x.tif",
//     never "/data/a-evil/x.tif";
//   - with no --allow-href-prefix, the rule is the catalog's own place: the
//     folder holding a local catalog (or the catalog folder itself), the
//     bucket of an s3:// catalog, the host of an https:// catalog.
//
// GDAL indirections are refused at open (see openDrivers): an asset is read
// by the GeoTIFF driver only, so a VRT (or any format naming other files or
// URLs) in an allowed folder cannot make GDAL fetch what it names.

// hrefRule is a normalized location: a scheme ("file", "s3", "https",
// "http" on loopback), a
// host ("" for files; the bucket for s3) and a cleaned absolute path.
type hrefRule struct {
	scheme, host, path string
}

func (r hrefRule) String() string {
	if r.scheme == "file" {
		return r.path
	}
	return r.scheme + "://" + r.host + r.path
}

// admits reports whether h lies at or below r, by whole path segments.
func (r hrefRule) admits(h hrefRule) bool {
	if r.scheme != h.scheme || r.host != h.host {
		return false
	}
	p := strings.TrimSuffix(r.path, "/")
	return p == "" || h.path == p || strings.HasPrefix(h.path, p+"/")
}

// ErrBadRule marks an href rule that cannot be used: an --allow-href-prefix
// value, or a catalog whose own place cannot be one (a configuration
// error, found before anything is read).
var ErrBadRule = errors.New("series: unusable href rule")

// parseRules normalizes the --allow-href-prefix values.
func parseRules(prefixes []string) ([]hrefRule, error) {
	var rules []hrefRule
	for _, p := range prefixes {
		if strings.TrimSpace(p) == "" {
			continue
		}
		r, err := normalizeHref(p)
		if err != nil {
			return nil, fmt.Errorf("--allow-href-prefix %q: %v: %w", p, err, ErrBadRule)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// catalogRule is the default rule of a catalog read from src: the folder of
// a local catalog file (the folder itself for a folder of items), the bucket
// of an s3:// catalog, the host of an https:// one.
func catalogRule(src string, isDir bool) (hrefRule, error) {
	r, err := normalizeHref(src)
	if err != nil {
		return hrefRule{}, err
	}
	switch {
	case r.scheme != "file":
		r.path = "/"
	case !isDir:
		r.path = filepath.Dir(r.path)
	}
	return r, nil
}

// normalizeHref parses and normalizes a resolved href (or a prefix).
func normalizeHref(href string) (hrefRule, error) {
	switch {
	case href == "":
		return hrefRule{}, errors.New("empty href")
	case strings.ContainsAny(href, "\x00\\"):
		return hrefRule{}, errors.New("NUL or backslash in href")
	case strings.HasPrefix(href, "/vsi"):
		return hrefRule{}, errors.New("GDAL virtual paths are not accepted as hrefs")
	case strings.HasPrefix(strings.ToLower(href), "file:"):
		u, err := url.Parse(href)
		if err != nil {
			return hrefRule{}, err
		}
		if u.User != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			return hrefRule{}, errors.New("file:// URL with a host or without a path")
		}
		return localRule(u.Path)
	case isURL(href):
		return urlRule(href)
	}
	return localRule(href)
}

// localRule is the cleaned absolute path of a local file with its symlinks
// resolved (those of its folder when the file does not exist).
func localRule(p string) (hrefRule, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return hrefRule{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	return hrefRule{scheme: "file", path: abs}, nil
}

// urlRule normalizes an s3:// or https:// URL.
func urlRule(href string) (hrefRule, error) {
	low := strings.ToLower(href)
	if strings.Contains(low, "%2e") || strings.Contains(low, "%2f") || strings.Contains(low, "%5c") {
		return hrefRule{}, errors.New("encoded dot, slash or backslash in URL")
	}
	u, err := url.Parse(href)
	if err != nil {
		return hrefRule{}, err
	}
	if u.User != nil {
		return hrefRule{}, errors.New("userinfo in URL")
	}
	r := hrefRule{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Host)}
	switch r.scheme {
	case "s3":
	case "https":
		if h, port, err := net.SplitHostPort(r.host); err == nil && port == "443" {
			r.host = h
		}
	case "http":
		// A local mirror, proxy or test server (a STAC API root on
		// loopback, docs/stac-api.md): plain http never leaves the machine.
		if !loopback(u.Hostname()) {
			return hrefRule{}, fmt.Errorf("scheme %q is accepted on a loopback host only (127.0.0.1, ::1, localhost); elsewhere use https", u.Scheme)
		}
		if h, port, err := net.SplitHostPort(r.host); err == nil && port == "80" {
			r.host = h
		}
	default:
		return hrefRule{}, fmt.Errorf("scheme %q is not file, s3, https or http on loopback", u.Scheme)
	}
	if r.host == "" {
		return hrefRule{}, errors.New("URL without host or bucket")
	}
	r.path = path.Clean("/" + u.Path)
	return r, nil
}

// loopback reports whether host names this machine: localhost or a
// loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gdalPath maps a resolved href to the name GDAL opens, or an error
// wrapping errBadHref: the href must normalize, lie under one of the rules,
// and, when local, be a regular file. The name opened is the normalized
// one, so what is read is what was checked.
func gdalPath(href string, rules []hrefRule) (string, error) {
	h, err := normalizeHref(href)
	if err != nil {
		return "", fmt.Errorf("href %q: %v: %w", href, err, errBadHref)
	}
	ok := false
	for _, r := range rules {
		if r.admits(h) {
			ok = true
			break
		}
	}
	if !ok {
		as := ""
		if h.String() != href {
			as = " (as " + h.String() + ")"
		}
		return "", fmt.Errorf("href %s%s outside the allowed prefixes %v: %w", href, as, rules, errBadHref)
	}
	if h.scheme != "file" {
		loc := h.String()
		if u, err := url.Parse(href); err == nil && u.RawQuery != "" && h.scheme != "s3" {
			loc += "?" + u.RawQuery // signed URLs carry their signature in the query
		}
		return storage.GDALPath(loc), nil
	}
	st, err := os.Stat(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return h.path, nil // GDAL's open fails: unreadable, as any missing file
	}
	if err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("href %s: not a regular file (%s): %w", href, st.Mode().Type(), errBadHref)
	}
	return h.path, nil
}

// GDALPath is the name GDAL opens a resolved href by, when the catalog's
// href rules admit it (a signed URL keeps its query), else an error naming
// the href and the rules.
func (c *Catalog) GDALPath(href string) (string, error) { return gdalPath(href, c.allow) }

// HrefCheck is what a catalog's href rules make of the assets the runs
// would read (Catalog.CheckHrefs): how many they refuse, and where the
// refused ones point.
type HrefCheck struct {
	// Assets counts the assets the profiles read (a band, a QA mask) over
	// the items a profile reads; Refused those the rules refuse.
	Assets, Refused int
	// Places are the deepest folders (scheme, host and path, ending in
	// "/") holding the refused hrefs, most refused first; a refused href
	// that does not even normalize is not placed.
	Places []string
	// Allowed are the rules, as --allow-href-prefix would write them.
	Allowed []string
}

// Misconfigured reports whether the rules refuse all, or nearly all (at
// least nine in ten), of the assets a run would read: then the rules, not
// the archive, are wrong (a forgotten --allow-href-prefix, a catalog copied
// away from its archive), and every scene skipped as bad-href would hide
// that behind "no clear observation".
func (h HrefCheck) Misconfigured() bool {
	return h.Refused > 0 && h.Refused*10 >= h.Assets*9
}

// CheckHrefs matches the href of every asset the profiles read (each
// item's roles, as a scene read would resolve them) against the catalog's
// rules, without opening anything.
func (c *Catalog) CheckHrefs(profiles map[string]*Profile) HrefCheck {
	var h HrefCheck
	for _, r := range c.allow {
		h.Allowed = append(h.Allowed, r.prefix())
	}
	byPlace := map[string]int{}
	var places []string
	for _, it := range c.Items {
		p := profiles[it.Collection]
		if p == nil {
			continue
		}
		for _, w := range profileWants(p) {
			_, a, ok := firstKey(it, w.keys)
			if !ok {
				continue
			}
			h.Assets++
			n, err := normalizeHref(a.Href)
			if err == nil && slices.ContainsFunc(c.allow, func(r hrefRule) bool { return r.admits(n) }) {
				continue
			}
			h.Refused++
			if err != nil {
				continue
			}
			dir := n
			dir.path = path.Dir(n.path)
			places = mergePlace(places, byPlace, dir)
		}
	}
	sort.SliceStable(places, func(i, j int) bool { return byPlace[places[i]] > byPlace[places[j]] })
	h.Places = places
	return h
}

// mergePlace adds folder d to places, merging it with a place of the same
// scheme and host into their deepest common folder, and counts it.
func mergePlace(places []string, count map[string]int, d hrefRule) []string {
	for i, p := range places {
		r, _ := parsePlace(p)
		if r.scheme != d.scheme || r.host != d.host {
			continue
		}
		c := r
		c.path = commonDir(r.path, d.path)
		np := c.prefix()
		if np != p {
			count[np] = count[p]
			delete(count, p)
			places[i] = np
		}
		count[np]++
		return places
	}
	np := d.prefix()
	count[np]++
	return append(places, np)
}

// parsePlace is the rule of a place written by hrefRule.prefix.
func parsePlace(p string) (hrefRule, error) {
	if strings.HasPrefix(p, "/") {
		return hrefRule{scheme: "file", path: strings.TrimSuffix(p, "/")}, nil
	}
	return urlRule(p)
}

// commonDir is the deepest folder holding both cleaned absolute paths.
func commonDir(a, b string) string {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	if c := strings.Join(as[:n], "/"); c != "" {
		return c
	}
	return "/"
}

// prefix writes the rule as an --allow-href-prefix value: its location
// ending in "/".
func (r hrefRule) prefix() string {
	s := r.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

// CheckHrefPrefixes checks allowed href prefixes (--allow-href-prefix) by
// the rules hrefs are matched with: the error names the first one that
// cannot be a rule (another scheme, userinfo, a GDAL path).
func CheckHrefPrefixes(prefixes []string) error {
	_, err := parseRules(prefixes)
	return err
}

// Remote reports whether any asset of the catalog is read through GDAL's
// network file systems (/vsis3/, /vsicurl/: an object store or an HTTP
// server) rather than from local files.
func (c *Catalog) Remote() bool {
	for _, it := range c.Items {
		for _, a := range it.Assets {
			if p, err := gdalPath(a.Href, c.allow); err == nil && strings.HasPrefix(p, "/vsi") {
				return true
			}
		}
	}
	return false
}
