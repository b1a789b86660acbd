package server

import "net/http"

// Handler routes the JSON API and the operational endpoints (which the API serves) to the API,
// and every other path to the web UI.
func (m *Main) Handler() http.Handler {
	mux := http.NewServeMux()
	api := m.API.Handler()
	for _, p := range []string{"/api/", "/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, api)
	}
	mux.Handle("/", m.Web.Handler())
	return mux
}
