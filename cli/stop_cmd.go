package cli

import (
	"context"
	"fmt"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
)

// runStop is `tether stop`: what the tray's Quit does, from a terminal (a
// desktop without a tray host, `tether serve`). The daemon lets the calls
// in flight finish first (up to daemon.DrainTimeout) and denies held ones;
// AI apps' running bridges then do not start it again until the user
// starts Tether.
func runStop(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("tether stop takes no arguments")
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	rec, _, err := daemon.Probe(ctx, paths)
	if err != nil {
		fmt.Println(notRunning(ctx, paths, err))
		return nil
	}
	token, err := paths.ReadControlToken()
	if err != nil {
		return err
	}
	if err := paths.MarkQuit(); err != nil {
		return fmt.Errorf("record the stop (AI apps would start Tether again): %w", err)
	}
	fmt.Printf("stopping Tether (pid %d): calls in flight finish first (up to %s)\n", rec.PID, daemon.DrainTimeout)
	if err := daemon.Stop(ctx, paths, rec, token); err != nil {
		return fmt.Errorf("Tether (pid %d) did not stop: %w", rec.PID, err)
	}
	fmt.Println("stopped; the AI apps running now do not start it again until you start Tether (an AI app started later does)")
	return nil
}
