package prometheus

import (
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

func TestValue(t *testing.T) {
	tests := []struct {
		name    string
		in      model.Value
		want    any
		wantErr string
	}{
		{name: "scalar", in: &model.Scalar{Value: 0.5}, want: 0.5},
		{name: "one sample", in: model.Vector{{Value: 0.04}}, want: 0.04},
		{name: "no sample", in: model.Vector{}, wantErr: "the query matched no series"},
		{name: "several samples", in: model.Vector{{Value: 1}, {Value: 2}}, want: []any{1.0, 2.0}},
		{name: "string", in: &model.String{Value: "up"}, want: "up"},
		{name: "matrix", in: model.Matrix{}, wantErr: "range vector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Value(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Value() = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}
