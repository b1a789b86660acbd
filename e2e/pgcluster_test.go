package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pgCluster is a private PostgreSQL cluster that one test may stop and start at will, so that the
// shared server other test packages use is never touched. It needs Debian's server binaries
// (/usr/lib/postgresql/<v>/bin); as root it runs them as the postgres OS user, which PostgreSQL
// requires.
type pgCluster struct {
	t       *testing.T
	bin     string // directory of initdb, pg_ctl
	dir     string // owned by the cluster's OS user: data/, the socket, the log
	port    int
	asUser  string // "" to run as ourselves
	running bool
}

// newPGCluster initialises a cluster in a temporary directory on a free port and starts it. It
// skips the test when the machine has no PostgreSQL server binaries.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var usable []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		t.Skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: cannot run a private cluster")
	}
	sort.Slice(usable, func(i, j int) bool { return pgVersion(usable[i]) < pgVersion(usable[j]) })
	c := &pgCluster{t: t, bin: usable[len(usable)-1]}
	dir, err := os.MkdirTemp("", "dynabench-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		c.stop("immediate")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres OS user: PostgreSQL refuses to run as root")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asUser = "postgres"
	}
	c.port = freePort(t)
	c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	// Keep the test's cluster small and quick to restart; durability settings stay at their defaults
	// (fsync on, synchronous_commit on), which is what the test is about.
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 60\nshared_buffers = 16MB\n",
		c.port, c.dir)
	c.appendConf(conf)
	c.start()
	return c
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the DSN of the cluster's postgres database.
func (c *pgCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func (c *pgCluster) command(tool string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, tool)
	if c.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (c *pgCluster) run(tool string, args ...string) {
	c.t.Helper()
	out, err := c.command(tool, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

func (c *pgCluster) appendConf(s string) {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		c.t.Fatal(err)
	}
}

// start starts the cluster and waits until it accepts connections.
func (c *pgCluster) start() time.Duration {
	c.t.Helper()
	began := time.Now()
	c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start")
	c.running = true
	return time.Since(began)
}

// stop stops the cluster: "immediate" is a crash as far as the data is concerned (no checkpoint;
// recovery replays the WAL at the next start), and drops every client connection at once.
func (c *pgCluster) stop(mode string) {
	if !c.running {
		return
	}
	c.running = false
	out, err := c.command("pg_ctl", "-D", c.data(), "-m", mode, "-w", "stop").CombinedOutput()
	if err != nil {
		c.t.Logf("pg_ctl stop: %v\n%s", err, out)
	}
}

// logTail returns the last n lines of the cluster's server log.
func (c *pgCluster) logTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
