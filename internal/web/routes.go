package web

import (
	"net/http"

	"github.com/dynabench-go/dynabench"
)

// route is one page route: a method and path pattern, and its handler.
type route struct {
	pattern string
	handler func(s *Server) HandlerFunc
}

// pageRoutes lists every page. Mutating routes are POST only; CrossOriginProtection guards them.
// A new page adds its line here (the authorization test fails until it has a row for it).
var pageRoutes = []route{
	{"GET /{$}", func(s *Server) HandlerFunc { return s.home }},
	{"GET /login", func(s *Server) HandlerFunc { return s.loginPage }},
	{"POST /login", func(s *Server) HandlerFunc { return s.login }},
	{"GET /register", func(s *Server) HandlerFunc { return s.registerPage }},
	{"POST /register", func(s *Server) HandlerFunc { return s.register }},
	{"POST /logout", func(s *Server) HandlerFunc { return s.logout }},
	{"GET /profile", func(s *Server) HandlerFunc { return s.profile }},
	{"POST /profile/tokens", func(s *Server) HandlerFunc { return s.createToken }},
	{"POST /profile/tokens/{id}/revoke", func(s *Server) HandlerFunc { return s.revokeToken }},
	{"GET /tasks/{code}", func(s *Server) HandlerFunc { return s.task }},
	{"GET /tasks/{code}/create", func(s *Server) HandlerFunc { return s.createPage }},
	{"POST /tasks/{code}/create", func(s *Server) HandlerFunc { return s.createExample }},
	{"POST /tasks/{code}/examples/{id}/explain", func(s *Server) HandlerFunc { return s.explainExample }},
	{"POST /tasks/{code}/examples/{id}/retract", func(s *Server) HandlerFunc { return s.retractExample }},
	{"POST /tasks/{code}/examples/{id}/flag", func(s *Server) HandlerFunc { return s.flagExample }},
	{"GET /tasks/{code}/validate", func(s *Server) HandlerFunc { return s.validatePage }},
	{"POST /tasks/{code}/validate/{id}", func(s *Server) HandlerFunc { return s.validate }},
	{"GET /tasks/{code}/settings", func(s *Server) HandlerFunc { return s.settingsPage }},
	{"POST /tasks/{code}/settings", func(s *Server) HandlerFunc { return s.saveSettings }},
	{"POST /tasks/{code}/config", func(s *Server) HandlerFunc { return s.saveConfig }},
	{"GET /tasks/{code}/contexts", func(s *Server) HandlerFunc { return s.contextsPage }},
	{"POST /tasks/{code}/contexts", func(s *Server) HandlerFunc { return s.uploadContexts }},
	{"GET /tasks/{code}/rounds", func(s *Server) HandlerFunc { return s.roundsPage }},
	{"POST /tasks/{code}/rounds", func(s *Server) HandlerFunc { return s.nextRound }},
	{"POST /tasks/{code}/rounds/{n}/models", func(s *Server) HandlerFunc { return s.setRoundModels }},
	{"POST /tasks/{code}/rounds/{n}/release", func(s *Server) HandlerFunc { return s.releaseRound }},
	{"GET /tasks/{code}/rounds/{n}/export", func(s *Server) HandlerFunc { return s.exportRound }},
	{"POST /tasks/{code}/retrain", func(s *Server) HandlerFunc { return s.retrain }},
	{"GET /tasks/{code}/releases", func(s *Server) HandlerFunc { return s.releasesPage }},
	{"POST /tasks/{code}/rounds/{n}/releases/{v}/public", func(s *Server) HandlerFunc { return s.setReleasePublic }},
	{"GET /tasks/{code}/rounds/{n}/releases/{v}/files", func(s *Server) HandlerFunc { return s.releaseFile }},
	{"GET /tasks/{code}/flagged", func(s *Server) HandlerFunc { return s.flaggedPage }},
	{"POST /tasks/{code}/flagged/{id}", func(s *Server) HandlerFunc { return s.ownerVerdict }},
	{"GET /tasks/{code}/leaderboard", func(s *Server) HandlerFunc { return s.leaderboard }},
	{"POST /tasks/{code}/leaderboard/forks", func(s *Server) HandlerFunc { return s.createFork }},
	{"GET /tasks/{code}/leaderboard/forks/{slug}", func(s *Server) HandlerFunc { return s.fork }},
	{"POST /tasks/{code}/leaderboard/snapshots", func(s *Server) HandlerFunc { return s.createSnapshot }},
	{"GET /tasks/{code}/leaderboard/snapshots/{slug}", func(s *Server) HandlerFunc { return s.snapshot }},
	{"GET /compare", func(s *Server) HandlerFunc { return s.compare }},
	{"GET /models/{id}", func(s *Server) HandlerFunc { return s.model }},
	{"POST /models/{id}/publish", func(s *Server) HandlerFunc { return s.publishModel }},
	{"POST /models/{id}/evaluate", func(s *Server) HandlerFunc { return s.evaluateModel }},
	{"GET /tasks/{code}/submit", func(s *Server) HandlerFunc { return s.submitPage }},
	{"POST /tasks/{code}/submit", func(s *Server) HandlerFunc { return s.submitModel }},
	{"GET /tasks/{code}/datasets", func(s *Server) HandlerFunc { return s.datasetsPage }},
	{"POST /tasks/{code}/datasets", func(s *Server) HandlerFunc { return s.uploadDataset }},
	{"GET /admin/users", func(s *Server) HandlerFunc { return s.adminUsers }},
	{"POST /admin/users/{id}/role", func(s *Server) HandlerFunc { return s.setRole }},
}

// Routes lists the method and pattern of every page route, for tests and documentation.
func (s *Server) Routes() []string {
	out := make([]string, len(pageRoutes))
	for i, r := range pageRoutes {
		out[i] = r.pattern
	}
	return out
}

func (s *Server) routes() {
	s.mux.Handle("GET /static/", s.assets)
	for _, r := range pageRoutes {
		s.Handle(r.pattern, r.handler(s))
	}
	s.Handle("/", func(http.ResponseWriter, *http.Request) error {
		return dynabench.Errorf(dynabench.ENOTFOUND, "there is no page here")
	})
}
