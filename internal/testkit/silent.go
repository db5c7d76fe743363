package testkit

import (
	"net"
	"sync"
	"testing"
)

// SilentServer listens on loopback, accepts every connection and never
// answers: a server that hangs, for testing read deadlines. It returns its
// host:port; the listener and connections close when the test ends.
func SilentServer(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// NoHandshakeServer listens on loopback as an HTTPS server that never
// completes a TLS handshake: it reads the client's hello, answers with the
// first bytes of a record and stalls. It returns its host:port; the
// listener and connections close when the test ends.
func NoHandshakeServer(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	tb.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Read(make([]byte, 4096))
				_, _ = c.Write([]byte{0x16, 0x03, 0x03, 0x40, 0x00, 0x02}) // a handshake record that never comes
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}
