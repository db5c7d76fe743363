// Package zarc is the vocabulary of the regulation that manejo implements
// (IN SPA/MAPA 2/2025, Portaria SPA/MAPA 349/2026 and the ZARC portarias):
// the main crops, the agricultural year, the calendar day, the decêndio and
// the Tabela 1 levels of T and C.
//
// Every other package imports these definitions rather than copying them.
// zarc imports nothing of this module and does no I/O.
package zarc
