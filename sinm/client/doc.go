// Package client delivers SINM payloads: it obtains a Keycloak
// client_credentials token, POSTs (or PUTs) one payload per talhão to
// /api/v1/sensoriamentos-remotos, retries what is transient, keeps an
// append-only ledger of what was sent (sinm/submissions.jsonl in the output
// folder) and reads SINM's classification back to compare it with the local
// preview (classification.parquet).
//
// Secrets never leave this package in text: the client secret and the token
// are not printed, classification keys (capabilities) appear only as a
// prefix (Redact), and every message from SINM is scrubbed of anything that
// looks like a CPF or CNPJ before it is reported (Scrub). docs/sinm.md
// describes the operator's view.
package client
