// Package sinm builds the SINM remote-sensing payload of a talhão
// (MonitoramentoSateliteInput, one JSON document per talhão, written as
// sinm/<field_id>.json in a run's output) from the rows of export's datasets.
//
// It owns what the SINM submission needs and nothing else: the payload types
// and BuildPayload (which refuses, with an error naming the talhão and the
// item, anything the schema or the regulation would reject instead of
// guessing or clamping), CPF/CNPJ normalisation and check digits, the JSON
// Schema monitoramento-satelite.schema.json (the project's copy of the SINM
// schema, embedded, with what the current client always sends required;
// checked with a JSON Schema 2020-12 validator, and the CPF/CNPJ check
// digits, by ValidatePayload), the file of classification keys a run carries
// from the talhões (KeysName, WriteKeys), and the mapping from collections to
// SINM satellite codes (SatelliteCodes), which is configured, never guessed.
//
// Errors are prefixed "sinm:". sinm imports export (rows), grid (the
// talhão's declared properties) and internal/num (rounding); it does no I/O
// beyond the io.Reader and io.Writer it is given.
package sinm
