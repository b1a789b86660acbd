package api_test

import (
	"bufio"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// TestOpenAPI: the served document is valid OpenAPI 3.1, and no route is missing from it. The
// routes are found three independent ways: the operations the code registers (read from the Go
// source, so a new route cannot be forgotten), the routing table itself (probed for every
// documented path and for every route of API.md), and API.md's tables of the fixed core.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, enginesFirst())
	r := e.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/openapi.json", "", nil)
	if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		t.Errorf("Content-Type %q", ct)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.Body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Errorf("validate: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
	}

	documented := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			documented[method+" "+path] = o
		}
	}
	if len(documented) < 20 {
		t.Fatalf("only %d operations documented", len(documented))
	}

	t.Run("every documented route is served", func(t *testing.T) {
		for route, o := range documented {
			method, path, _ := strings.Cut(route, " ")
			req, _ := http.NewRequest(method, e.URL+fillPath(path), nil)
			if _, pattern := e.API.Mux().Handler(req); pattern != route {
				t.Errorf("%s: the mux routes %s %s to %q", route, method, fillPath(path), pattern)
			}
			if o.OperationID == "" || o.Summary == "" {
				t.Errorf("%s: no operationId or summary", route)
			}
			if o.Security != nil && len(*o.Security) > 0 && o.Responses.Status(http.StatusUnauthorized) == nil {
				t.Errorf("%s: needs a token but documents no 401", route)
			}
			// Over HTTP: whatever the status, the answer comes from the route, not from the
			// unmatched-route fallback.
			resp := e.Do(t, method, fillPath(path), e.AdminToken, nil)
			if resp.Status == http.StatusMethodNotAllowed || strings.Contains(resp.String("error.message"), "no such route") {
				t.Errorf("%s: %d %s", route, resp.Status, clip(resp.Body))
			}
		}
	})

	t.Run("every route in the source is documented", func(t *testing.T) {
		routes := sourceRoutes(t, "..")
		if len(routes) < len(documented)-3 {
			t.Fatalf("found %d routes in the source, fewer than the %d documented: is the scan broken?", len(routes), len(documented))
		}
		for _, route := range routes {
			if _, ok := documented[route]; !ok {
				t.Errorf("%s is registered but not in the OpenAPI document", route)
			}
		}
	})

	t.Run("API.md", func(t *testing.T) {
		core, all := apiDocRoutes(t)
		for _, route := range core {
			if _, ok := documented[route]; !ok {
				t.Errorf("API.md's %s is not in the OpenAPI document", route)
			}
		}
		// Routes of the later sections need not exist yet, but once served they must be documented.
		for _, route := range all {
			method, path, _ := strings.Cut(route, " ")
			req, _ := http.NewRequest(method, e.URL+fillPath(path), nil)
			if _, pattern := e.API.Mux().Handler(req); pattern != "" && !strings.HasPrefix(pattern, "/") {
				if _, ok := documented[pattern]; !ok {
					t.Errorf("API.md's %s is served as %q, which is not documented", route, pattern)
				}
			}
		}
	})
}

// fillPath puts a plausible value in each {param}.
func fillPath(path string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{code}":
			return "sentiment"
		}
		return "1"
	})
}

// huma's own routes: the document itself, the docs page and the JSON schemas.
var humaRoutes = regexp.MustCompile(`^GET /api/v1/(openapi|docs|schemas)`)

// sourceRoutes reads the non-test Go files under dir for route registrations: calls of op(method,
// path, ...) (every JSON route), huma.Operation literals, and Handle/HandleFunc patterns on a mux.
func sourceRoutes(t *testing.T, dir string) []string {
	t.Helper()
	var routes []string
	add := func(method, path string) {
		if method == "" || !strings.HasPrefix(path, "/") {
			return
		}
		r := strings.ToUpper(method) + " " + path
		if !humaRoutes.MatchString(r) && !slices.Contains(routes, r) {
			routes = append(routes, r)
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				name := callName(x.Fun)
				switch {
				case name == "op" && len(x.Args) >= 2:
					add(methodOf(x.Args[0]), stringOf(x.Args[1]))
				case (name == "Handle" || name == "HandleFunc") && len(x.Args) >= 1:
					// Pages of a web UI may share the mux; the API's routes are under /api/.
					if m, p, ok := strings.Cut(stringOf(x.Args[0]), " "); ok && strings.HasPrefix(p, "/api/") {
						add(m, p)
					} else if p := stringOf(x.Args[0]); strings.HasPrefix(p, "/api/") {
						t.Errorf("%s: %s registers %q for every method; give it one", fset.Position(x.Pos()), name, p)
					}
				}
			case *ast.CompositeLit:
				if sel, ok := x.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Operation" {
					var method, path string
					for _, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							switch callName(kv.Key) {
							case "Method":
								method = methodOf(kv.Value)
							case "Path":
								path = stringOf(kv.Value)
							}
						}
					}
					add(method, path)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

func callName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func stringOf(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return s
	}
	return ""
}

// methodOf reads http.MethodGet or "GET".
func methodOf(e ast.Expr) string {
	if s := stringOf(e); s != "" {
		return s
	}
	if sel, ok := e.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Method") {
		return strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
	}
	return ""
}

// apiDocRoutes parses API.md's tables: the routes of the fixed core's sections (Operations,
// Accounts, Tasks and rounds, Examples and validations), and every route it lists.
func apiDocRoutes(t *testing.T) (core, all []string) {
	t.Helper()
	path := os.Getenv("DYNABENCH_API_MD")
	for _, p := range []string{"../../../shared/docs/API.md", "../../docs/API.md", "/work/shared/docs/API.md"} {
		if path != "" {
			break
		}
		if _, err := os.Stat(p); err == nil {
			path = p
		}
	}
	if path == "" {
		t.Skip("API.md not found; set DYNABENCH_API_MD")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	coreSections := []string{"Operations", "Accounts", "Tasks and rounds", "Examples and validations"}
	row := regexp.MustCompile("^\\| `(GET|POST|PUT|PATCH|DELETE) (/[^` ?]*)")
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(h)
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil {
			r := m[1] + " " + m[2]
			all = append(all, r)
			if slices.Contains(coreSections, section) {
				core = append(core, r)
			}
		}
	}
	if len(core) < 25 {
		t.Fatalf("found only %d core routes in %s: has its format changed?", len(core), path)
	}
	return core, all
}

// TestUnmatchedRoutes: a path or method no route takes still gets the API's error shape.
func TestUnmatchedRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, enginesFirst(), servertest.NoDemo)
	e.run(t, []scenario{
		{name: "unknown path", method: "GET", path: "/api/v1/nothing", who: "alice", status: 404,
			want: map[string]any{"error.code": "not_found", "error.message": present}},
		{name: "unknown path anonymous", method: "POST", path: "/api/v2/tasks", status: 404, want: map[string]any{"error.code": "not_found"}},
		{name: "wrong method", method: "DELETE", path: "/api/v1/tasks", who: "admin", status: 405,
			want: map[string]any{"error.code": "method_not_allowed"},
			check: func(t *testing.T, e *env, r *servertest.Response) {
				if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
					t.Errorf("Allow %q", allow)
				}
			}},
		{name: "bad token on an unknown path", method: "GET", path: "/api/v1/nothing", who: "bad", status: 401},
	})
}
