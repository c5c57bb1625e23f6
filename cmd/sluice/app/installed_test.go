package app

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPrepareInstalled(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CAFile), []byte("CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                 string
		o                    Options
		wantNil, wantErr     bool
		wantURL, wantService string
	}{
		{name: "neither: nothing to do", o: Options{CertDir: dir}, wantNil: true},
		{name: "service", o: Options{CertDir: dir, WebhookService: "sluice-system/sluice-webhook"},
			wantService: "sluice-system/sluice-webhook/convert"},
		{name: "url", o: Options{CertDir: dir, WebhookURL: "https://127.0.0.1:9443/"}, wantURL: "https://127.0.0.1:9443/convert"},
		{name: "both", o: Options{CertDir: dir, WebhookService: "a/b", WebhookURL: "https://x"}, wantErr: true},
		{name: "service without namespace", o: Options{CertDir: dir, WebhookService: "sluice-webhook"}, wantErr: true},
		{name: "no CA", o: Options{CertDir: t.TempDir(), WebhookService: "a/b"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prepareInstalled(tt.o)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if (got == nil) != tt.wantNil {
				t.Fatalf("got %v, wantNil %v", got, tt.wantNil)
			}
			if got == nil {
				return
			}
			ca, err := os.ReadFile(got.caFile)
			if err != nil {
				t.Fatal(err)
			}
			cc := got.clientConfig("/convert", ca)
			if string(cc.CABundle) != "CA" {
				t.Errorf("caBundle %q, want the CA file's", cc.CABundle)
			}
			switch {
			case tt.wantURL != "":
				if cc.URL == nil || *cc.URL != tt.wantURL || cc.Service != nil {
					t.Errorf("clientConfig %+v, want URL %s", cc, tt.wantURL)
				}
			default:
				s := cc.Service
				if s == nil || cc.URL != nil || s.Path == nil || s.Namespace+"/"+s.Name+*s.Path != tt.wantService {
					t.Errorf("clientConfig %+v, want service %s", cc, tt.wantService)
				}
			}
		})
	}
}
