package precondition

import (
	"encoding/json"
	"testing"
)

func TestMergePatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		patch   any
		rv      string
		want    string
		wantErr bool
	}{
		{name: "adds metadata", patch: map[string]any{"spec": map[string]any{"paused": false}}, rv: "7",
			want: `{"metadata":{"resourceVersion":"7"},"spec":{"paused":false}}`},
		{name: "keeps annotations", patch: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": nil}}}, rv: "8",
			want: `{"metadata":{"annotations":{"a":null},"resourceVersion":"8"}}`},
		{name: "raw JSON", patch: json.RawMessage(`{"spec":{}}`), rv: "9", want: `{"metadata":{"resourceVersion":"9"},"spec":{}}`},
		{name: "bytes are not JSON", patch: []byte(`{"spec":{}}`), rv: "9", wantErr: true},
		{name: "no resourceVersion", patch: map[string]any{}, rv: "", wantErr: true},
		{name: "not an object", patch: []int{1}, rv: "1", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MergePatch(tc.patch, tc.rv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
