// Package client delivers SINM payloads: it obtains a Keycloak
// client_credentials token, POSTs (or PUTs) one payload per talhão to
// /api/v1/sensoriamentos-remotos, retries what is transient, keeps an
// append-only ledger of what was sent (sinm/submissions.jsonl in the output
// folder) and reads SINM's classification back to compare it with the local
// preview (classification.parquet).
//
// Secrets never leave this package in text: every message on its way out
// (outcomes, ledger, status rows, log lines, errors) passes one filter that
// replaces the actual client secret, client id and tokens, reduces keys to
// a prefix (Redact), scrubs CPF/CNPJ-like digits (Scrub) and caps its
// length (MaxMessageBytes, MaxMessages). Requests follow no redirect to
// another host (ErrRedirect), and a submit holds the ledger's lock
// (ErrLedgerBusy). docs/sinm.md describes the operator's view.
package client
