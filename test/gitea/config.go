package gitea

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// config is what app.ini is written from.
type config struct {
	// dir is the server's work path: app.ini, data, repositories, logs.
	dir string
	// static is STATIC_ROOT_PATH, the directory holding options/.
	static string
	// port is the HTTP port on 127.0.0.1.
	port int
	// webhookTimeout is [webhook] DELIVER_TIMEOUT, in seconds.
	webhookTimeout int
}

// appINI renders app.ini. The server is reachable only on loopback, keeps
// everything under dir, sends no mail, runs no SSH server, fetches nothing
// from the internet (offline mode, no update checker), may deliver webhooks
// to loopback addresses (the tests' receivers), and runs as root only
// because the test machine does (Gitea refuses root otherwise).
func (c config) appINI() (string, error) {
	secret, err := randomHex(32)
	if err != nil {
		return "", err
	}
	internal, err := randomHex(32)
	if err != nil {
		return "", err
	}
	data := filepath.Join(c.dir, "data")
	sections := []struct {
		name string
		keys [][2]string
	}{
		{"", [][2]string{
			{"APP_NAME", "sluice test Gitea"},
			{"RUN_MODE", "prod"},
			{"WORK_PATH", c.dir},
			// Read from the root section, not [security].
			{"I_AM_BEING_UNSAFE_RUNNING_AS_ROOT", "true"},
		}},
		{"server", [][2]string{
			{"PROTOCOL", "http"},
			{"HTTP_ADDR", loopbackHost},
			{"HTTP_PORT", fmt.Sprint(c.port)},
			{"DOMAIN", loopbackHost},
			{"ROOT_URL", fmt.Sprintf("http://%s:%d/", loopbackHost, c.port)},
			{"STATIC_ROOT_PATH", c.static},
			{"APP_DATA_PATH", data},
			{"DISABLE_SSH", "true"},
			{"START_SSH_SERVER", "false"},
			{"OFFLINE_MODE", "true"},
			{"LFS_START_SERVER", "false"},
		}},
		{"database", [][2]string{
			{"DB_TYPE", "sqlite3"},
			{"PATH", filepath.Join(data, "gitea.db")},
			{"SQLITE_JOURNAL_MODE", "WAL"},
		}},
		{"repository", [][2]string{
			{"ROOT", filepath.Join(c.dir, "repositories")},
			{"DEFAULT_BRANCH", "main"},
		}},
		{"security", [][2]string{
			{"INSTALL_LOCK", "true"},
			{"SECRET_KEY", secret},
			{"INTERNAL_TOKEN", internal},
			{"PASSWORD_COMPLEXITY", "off"},
			{"MIN_PASSWORD_LENGTH", "8"},
			{"PASSWORD_CHECK_PWN", "false"},
		}},
		{"service", [][2]string{
			{"DISABLE_REGISTRATION", "true"},
			{"ENABLE_NOTIFY_MAIL", "false"},
			{"DEFAULT_KEEP_EMAIL_PRIVATE", "false"},
			{"ENABLE_BASIC_AUTHENTICATION", "true"},
		}},
		{"webhook", [][2]string{
			{"ALLOWED_HOST_LIST", "loopback"},
			{"DELIVER_TIMEOUT", fmt.Sprint(c.webhookTimeout)},
			{"SKIP_TLS_VERIFY", "false"},
		}},
		{"mailer", [][2]string{{"ENABLED", "false"}}},
		{"oauth2", [][2]string{{"ENABLED", "false"}}},
		{"actions", [][2]string{{"ENABLED", "false"}}},
		{"packages", [][2]string{{"ENABLED", "false"}}},
		{"indexer", [][2]string{
			{"ISSUE_INDEXER_TYPE", "db"},
			{"REPO_INDEXER_ENABLED", "false"},
		}},
		{"session", [][2]string{{"PROVIDER", "memory"}}},
		{"cache", [][2]string{{"ADAPTER", "memory"}}},
		{"cron", [][2]string{{"ENABLED", "false"}}},
		{"cron.update_checker", [][2]string{{"ENABLED", "false"}}},
		{"api", [][2]string{{"ENABLE_SWAGGER", "false"}}},
		{"log", [][2]string{
			{"MODE", "console"},
			{"LEVEL", "Info"},
			{"ROOT_PATH", filepath.Join(c.dir, "log")},
		}},
	}
	var b strings.Builder
	for _, s := range sections {
		if s.name != "" {
			fmt.Fprintf(&b, "\n[%s]\n", s.name)
		}
		for _, kv := range s.keys {
			fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
		}
	}
	return b.String(), nil
}

// write writes app.ini into dir and returns its path. Gitea rewrites it when
// it adds keys it generates, so it stays writable by the owner.
func (c config) write() (string, error) {
	ini, err := c.appINI()
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.dir, "app.ini")
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}
