package web

import (
	"net/http"

	"github.com/dynabench-go/dynabench"
)

// routes registers every page. Mutating routes are POST only; CrossOriginProtection guards them.
func (s *Server) routes() {
	s.mux.Handle("GET /static/", s.assets)
	s.Handle("GET /{$}", s.home)
	s.Handle("/", func(http.ResponseWriter, *http.Request) error {
		return dynabench.Errorf(dynabench.ENOTFOUND, "there is no page here")
	})

	s.Handle("GET /login", s.loginPage)
	s.Handle("POST /login", s.login)
	s.Handle("GET /register", s.registerPage)
	s.Handle("POST /register", s.register)
	s.Handle("POST /logout", s.logout)
	s.Handle("GET /profile", s.profile)
	s.Handle("POST /profile/tokens", s.createToken)
	s.Handle("POST /profile/tokens/{id}/revoke", s.revokeToken)

	s.Handle("GET /tasks/{code}", s.task)
	s.Handle("GET /tasks/{code}/create", s.createPage)
	s.Handle("POST /tasks/{code}/create", s.createExample)
	s.Handle("POST /tasks/{code}/examples/{id}/explain", s.explainExample)
	s.Handle("POST /tasks/{code}/examples/{id}/retract", s.retractExample)
	s.Handle("POST /tasks/{code}/examples/{id}/flag", s.flagExample)
	s.Handle("GET /tasks/{code}/validate", s.validatePage)
	s.Handle("POST /tasks/{code}/validate/{id}", s.validate)

	s.Handle("GET /tasks/{code}/settings", s.settingsPage)
	s.Handle("POST /tasks/{code}/settings", s.saveSettings)
	s.Handle("POST /tasks/{code}/config", s.saveConfig)
	s.Handle("GET /tasks/{code}/contexts", s.contextsPage)
	s.Handle("POST /tasks/{code}/contexts", s.uploadContexts)
	s.Handle("GET /tasks/{code}/rounds", s.roundsPage)
	s.Handle("POST /tasks/{code}/rounds", s.nextRound)
	s.Handle("POST /tasks/{code}/rounds/{n}/models", s.setRoundModels)
	s.Handle("GET /tasks/{code}/flagged", s.flaggedPage)
	s.Handle("POST /tasks/{code}/flagged/{id}", s.ownerVerdict)

	s.Handle("GET /admin/users", s.adminUsers)
	s.Handle("POST /admin/users/{id}/role", s.setRole)
}
