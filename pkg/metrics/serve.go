package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// ShutdownGrace bounds how long Close waits for scrapes under way.
const ShutdownGrace = 2 * time.Second

// Server serves a registry's metrics over HTTP at Path.
type Server struct {
	ln     net.Listener
	ctx    context.Context // Serve's, without its cancellation
	srv    *http.Server
	done   chan error
	once   sync.Once
	closed error
}

// Serve listens on addr (HOST:PORT; port 0 picks a free one) and serves
// reg's metrics at Path until Close. The error of a port in use is
// returned here, before anything is served.
func Serve(ctx context.Context, addr string, reg *prometheus.Registry) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// The server outlives a cancelled ctx until Close: its values, not its
	// cancellation, reach the scrapes and the shutdown.
	s := &Server{ln: ln, done: make(chan error, 1), ctx: context.WithoutCancel(ctx)}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return s.ctx }}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the metrics' address, http://HOST:PORT/metrics.
func (s *Server) URL() string { return "http://" + s.Addr() + Path }

// Close stops listening, lets the scrapes under way finish (up to
// ShutdownGrace), and returns once the server's goroutine has ended; a
// second call returns the first's error.
func (s *Server) Close() error {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(s.ctx, ShutdownGrace)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.srv.Close())
		}
		if serr := <-s.done; err == nil {
			err = serr
		}
		s.closed = err
	})
	return s.closed
}
