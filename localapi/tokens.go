package localapi

import (
	"errors"
	"net/http"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/mcptoken"
)

// TokenView is a named token as the API shows it (the CLI shows tokens read
// from the file itself, when no daemon runs, the same way).
func TokenView(i mcptoken.Info) apitype.Token {
	return apitype.Token{Name: i.Name, CreatedMs: ms(i.Created), LastUsedMs: ms(i.LastUsed)}
}

// tokenStore is the Tokens, or a 409 answer when there is none.
func (s *Server) tokenStore(w http.ResponseWriter) (*mcptoken.Store, bool) {
	if s.cfg.Tokens == nil {
		writeError(w, http.StatusConflict, "this daemon keeps no named tokens")
		return nil, false
	}
	return s.cfg.Tokens, true
}

func (s *Server) getTokens(w http.ResponseWriter, r *http.Request) {
	st, ok := s.tokenStore(w)
	if !ok {
		return
	}
	out := []apitype.Token{}
	for _, i := range st.List() {
		out = append(out, TokenView(i))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) addToken(w http.ResponseWriter, r *http.Request) {
	st, ok := s.tokenStore(w)
	if !ok {
		return
	}
	name, ok := profileName(w, r, "token name")
	if !ok {
		return
	}
	secret, info, err := st.Add(name)
	if err != nil {
		tokenError(w, err)
		return
	}
	s.log.Info("named MCP token added over the local API", "token", name)
	writeJSON(w, http.StatusOK, apitype.IssuedToken{Token: TokenView(info), Secret: secret})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	st, ok := s.tokenStore(w)
	if !ok {
		return
	}
	name, ok := profileName(w, r, "token name")
	if !ok {
		return
	}
	if err := st.Revoke(name); err != nil {
		tokenError(w, err)
		return
	}
	s.log.Info("named MCP token revoked over the local API", "token", name)
	w.WriteHeader(http.StatusNoContent)
}

// tokenError answers a token store error: 400 bad name, 409 name taken,
// 404 no such token, 500 otherwise (the file could not be written).
func tokenError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, mcptoken.ErrBadName):
		code = http.StatusBadRequest
	case errors.Is(err, mcptoken.ErrExists):
		code = http.StatusConflict
	case errors.Is(err, mcptoken.ErrNoToken):
		code = http.StatusNotFound
	}
	writeError(w, code, err.Error())
}
