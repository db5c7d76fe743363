package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm/client"
)

func racional(t, c int) string {
	return fmt.Sprintf(`{"scoreFinal": 3.0, "scoreMedio": 2.5, "indicadores": [
		{"nome": "Tempo sem revolvimento do solo", "origem": "SENSORIAMENTO_REMOTO", "valor": 5, "unidade": "anos", "faixa": ">= 4", "scoreParcial": %d},
		{"nome": "Cobertura do solo por palhada", "origem": "SENSORIAMENTO_REMOTO", "valor": 72, "unidade": "%%", "faixa": "60-80", "scoreParcial": %d},
		{"nome": "Saturação por bases (V%%)", "origem": "ANALISE_SOLO", "valor": 55, "unidade": "%%", "faixa": "50-60", "scoreParcial": 2},
		{"nome": "Saturação por alumínio (m%%)", "origem": "ANALISE_SOLO", "valor": 3, "unidade": "%%", "faixa": "< 5", "scoreParcial": 4}],
		"fatoresRestritivos": ["declividade acima de 3%% sem plantio em contorno"]}`, t, c)
}

func TestStatusPendingEqualDifferent(t *testing.T) {
	r := newRig(t, key(1), key(2), key(3))
	items := []client.Item{
		{FieldID: "A", Key: key(1), Payload: payload(t, 4)},
		{FieldID: "B", Key: key(2), Payload: payload(t, 4)},
		{FieldID: "C", Key: key(3), Payload: payload(t, 4)},
	}
	if _, err := r.submit(t, context.Background(), items, client.SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	r.fake.Classification[key(2)], r.fake.Racional[key(2)] = `{"nivelManejo": "NM3"}`, racional(3, 4)
	r.fake.Classification[key(3)], r.fake.Racional[key(3)] = `{"nivelManejo": 2}`, racional(2, 4)
	lv := func(n int32) *int32 { return &n }
	mi := 2.5
	preview := []export.ClassificationRow{
		{FieldID: "A", Level: lv(3)},
		{FieldID: "B", Level: lv(3), Mi: &mi, TLevel: lv(3), CLevel: lv(4), VLevel: lv(2), MLevel: lv(4)},
		{FieldID: "C", Level: lv(3), Mi: &mi, TLevel: lv(3), CLevel: lv(4), VLevel: lv(2), MLevel: lv(4)},
	}
	led, _ := client.ReadLedger(r.ledger)
	keys := map[string]string{"A": key(1), "B": key(2), "C": key(3)}
	rows, err := client.Status(context.Background(), r.c, led, keys, preview)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	a, b, c := rows[0], rows[1], rows[2]
	if a.Status != client.StatusPending || a.HTTPCode != 404 || a.Error != "" || a.Differences != nil {
		t.Errorf("A: %+v, want pending", a)
	}
	if b.Status != client.StatusComplete || *b.Level != 3 || *b.ScoreMedio != 2.5 || len(b.Indicators) != 4 || len(b.Differences) != 0 || len(b.Restrictive) != 1 {
		t.Errorf("B: %+v, want complete and equal", b)
	}
	want := "management level: SINM NM2, preview NM3; T indicator level (Tabela 1, 1–4): SINM 2, preview 3"
	if c.Status != client.StatusComplete || strings.Join(c.Differences, "; ") != want {
		t.Errorf("C differences %q, want %q", c.Differences, want)
	}
	if !strings.HasSuffix(b.Indicators[3], "[m]") || !strings.HasSuffix(b.Indicators[2], "[V]") {
		t.Errorf("indicators %q: alumínio is m, bases is V", b.Indicators)
	}
	// A key that is not the delivered one is reported, not sent.
	rows, _ = client.Status(context.Background(), r.c, led, map[string]string{"A": key(2)}, nil)
	if rows[0].Status != client.StatusError || !strings.Contains(rows[0].Error, "another key") {
		t.Errorf("wrong key: %+v", rows[0])
	}
	assertNoSecrets(t, r, nil, fmt.Errorf("%+v", rows))
}
