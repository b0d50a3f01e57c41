package bodyctx

import (
	"context"
	"io"
	"net/http"
)

// Limit returns body, whose reads fail with tooLarge() once more than n bytes
// came: an answer from a peer that may be hostile is never read whole into
// memory by a decoder.
func Limit(body io.ReadCloser, n int64, tooLarge func() error) io.ReadCloser {
	return &limited{rc: body, left: n, tooLarge: tooLarge}
}

type limited struct {
	rc       io.ReadCloser
	left     int64
	tooLarge func() error
}

func (b *limited) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, b.tooLarge()
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limited) Close() error { return b.rc.Close() }

// Bound ties resp's body to cancel and bounds it to n bytes: a body declared
// longer is refused before a byte is read (closed, cancel called, tooLarge()
// returned), one that turns out longer fails its reads with tooLarge().
func Bound(resp *http.Response, n int64, cancel context.CancelFunc, tooLarge func() error) error {
	if resp.ContentLength > n {
		_ = resp.Body.Close()
		cancel()
		return tooLarge()
	}
	resp.Body = CancelOnClose(Limit(resp.Body, n, tooLarge), cancel)
	return nil
}
