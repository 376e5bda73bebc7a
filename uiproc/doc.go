// Package uiproc starts and stops the processes of bare tether's user
// interface, which run apart from the daemon so that the login item never
// loads GTK or WebKit: the window (`tether-desktop window`, a client of the
// local API, started on demand and ended when closed) and the approval
// dialog (`tether-desktop approval-dialog`, one short-lived process per
// held call, at most one on screen, ended by the daemon when the call is
// decided elsewhere). On Windows both are modes of tether.exe itself.
package uiproc
