package ias

import (
	"net/http"
	"testing"
	"time"
)

func TestUserLogons(t *testing.T) {
	type call struct {
		digest string
		status int // 0: no answer
	}
	cases := map[string]struct {
		reason   string
		platform bool
		before   []call
		try      string
		wantHeld bool
	}{
		"namespace held after a rejection": {reason: "a namespace's rejected password holds its other unproven ones for the backoff",
			before: []call{{"wrong", 401}}, try: "other", wantHeld: true},
		"namespace proven password goes on": {reason: "a password IAS accepted keeps working beside a rejected one",
			before: []call{{"right", 200}, {"wrong", 401}}, try: "right"},
		"403 is no failed logon": {reason: "a 403 means IAS checked the password: it holds nothing back",
			before: []call{{"no-role", 403}}, try: "other"},
		"403 proves the password": {reason: "and the password it answered is proven",
			before: []call{{"no-role", 403}, {"wrong", 401}}, try: "no-role"},
		"no answer holds nothing": {reason: "a call that got no answer tells nothing of the password",
			before: []call{{"unknown", 0}}, try: "other"},
		"platform successor tried at once": {reason: "the platform's new password is tried at once after its stale one was rejected",
			platform: true, before: []call{{"stale", 401}}, try: "new"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &userLogons{url: "https://t.accounts.ondemand.com", username: "admin", backoff: time.Hour, platform: tc.platform}
			now := time.Now()
			for _, c := range tc.before {
				probe, err := u.admit(c.digest, now)
				if err != nil {
					t.Fatalf("%s\nadmit(%s) before: %v", tc.reason, c.digest, err)
				}
				var resp *http.Response
				if c.status != 0 {
					resp = &http.Response{StatusCode: c.status}
				}
				u.record(c.digest, probe, resp, now)
			}
			_, err := u.admit(tc.try, now)
			if held := err != nil; held != tc.wantHeld {
				t.Errorf("%s\nadmit(%s): held %v (%v), want held %v", tc.reason, tc.try, held, err, tc.wantHeld)
			}
		})
	}
}
