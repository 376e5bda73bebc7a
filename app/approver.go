package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

// ask is the daemon's policy.Approver (Window.Ask). It shows the window, whose approval
// queue offers the three choices (Allow once, Always allow for this site,
// Deny), and a native Yes/No dialog (Yes: allow once; No: deny): on Linux a
// Wails question dialog has only No and Yes (platform notes). The first
// answer wins: the queue's goes straight to the guard and ends ctx.
//
// Wails cannot close a dialog from code, so a dialog still open when the
// call is decided (answered in the queue, timed out, cancelled) stays up;
// its late answer changes nothing, and the timeline says so with a row of
// outcome "ignored". Dialogs are shown one at a time (Wails' Linux dialog
// has one result channel for all); a call answered in the queue while
// waiting for its turn gets no dialog. Closing a dialog without answering
// leaves the call in the queue.
func (a *App) ask(ctx context.Context, r policy.Request) (policy.Answer, error) {
	s := a.getShell()
	if s == nil {
		<-ctx.Done() // no window yet: the queue (once it shows) or the timeout decides
		return "", ctx.Err()
	}
	s.Show()
	select {
	case a.dialog <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	type result struct {
		yes bool
		err error
	}
	done := make(chan result, 1)
	title, msg := question(r)
	go func() {
		yes, err := s.Ask(title, msg)
		<-a.dialog
		a.resync(s) // what the window missed under the modal dialog
		done <- result{yes, err}
	}()
	select {
	case res := <-done:
		if res.err == nil {
			if res.yes {
				return policy.AllowOnce, nil
			}
			return policy.DenyOnce, nil
		}
		if !errors.Is(res.err, ErrDialogClosed) {
			a.log.Warn("native approval dialog failed; the window's queue still asks", "err", res.err)
		}
		<-ctx.Done() // the queue or the timeout decides
		return "", ctx.Err()
	case <-ctx.Done():
		why := "after the call was answered in the window or cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "after the call had timed out and was denied"
		}
		go func() {
			res := <-done
			if res.err != nil {
				return
			}
			a.lateAnswer(r, res.yes, why)
		}()
		return "", ctx.Err()
	}
}

// ErrDialogClosed is what Shell.Ask returns when the dialog was closed
// without an answer.
var ErrDialogClosed = errors.New("the dialog was closed without an answer")

// lateAnswer records a dialog answered after its call was decided.
func (a *App) lateAnswer(r policy.Request, yes bool, why string) {
	answer := "No"
	if yes {
		answer = "Yes"
	}
	e := timeline.Entry{CallID: r.ID, Time: a.cfg.Now(), Client: r.Client, Profile: r.Profile, Tab: r.Tab, Tool: r.Tool,
		Args: r.Summary, Class: string(r.Class), Site: strings.Join(r.Sites, " "),
		Decision: fmt.Sprintf("native dialog answered %s %s; it changed nothing", answer, why),
		Outcome:  timeline.Ignored}
	a.log.Info("late answer to a native approval dialog ignored", "tool", r.Tool, "answer", answer, "why", why)
	if _, err := a.cfg.Timeline.Record(context.Background(), e); err != nil {
		a.log.Error("timeline record failed", "err", err)
	}
}

// question is the native dialog's title and text. Page-derived text (the
// summary's URLs and labels) is shown as data, quoted, never as
// instructions.
func question(r policy.Request) (title, message string) {
	who := r.Client
	if who == "" {
		who = "An AI app"
	}
	where := "this page"
	if len(r.Sites) > 0 && r.Sites[0] != "" {
		where = strings.Join(r.Sites, ", ")
	}
	target := ""
	if r.Profile != "" {
		target = fmt.Sprintf(" (profile %s", r.Profile)
		if r.Tab > 0 {
			target += fmt.Sprintf(", tab %d", r.Tab)
		}
		target += ")"
	}
	title = "Tether: allow " + r.Tool + "?"
	message = fmt.Sprintf("%s asks to run %s, a %s action, on %s%s.\n\nArguments: %s\n\nYes allows it once. No denies it. To always allow it on this site, close this dialog (Esc) and answer in the Tether window's Approvals page. Unanswered, it is denied in %s.",
		who, r.Tool, r.Class, where, target, r.Summary, humanDuration(time.Until(r.Deadline)))
	return title, message
}

// humanDuration says d in minutes and seconds, e.g. "2 min" or "1 min 30 s".
func humanDuration(d time.Duration) string {
	d = d.Round(time.Second)
	m, sec := int(d/time.Minute), int((d%time.Minute)/time.Second)
	switch {
	case m == 0:
		return fmt.Sprintf("%d s", sec)
	case sec == 0:
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d min %d s", m, sec)
}
