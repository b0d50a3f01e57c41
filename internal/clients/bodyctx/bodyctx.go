// Package bodyctx ties a request's context to its response body: a per-call
// timeout must last until the body is read, not only until the headers came.
package bodyctx

import (
	"context"
	"io"
)

// CancelOnClose returns body, whose Close also cancels the call's context.
func CancelOnClose(body io.ReadCloser, cancel context.CancelFunc) io.ReadCloser {
	return &cancelOnClose{ReadCloser: body, cancel: cancel}
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
