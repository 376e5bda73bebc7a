// The GTK 3 approval dialog (gtk_linux.go). Every string it takes is
// shown as plain text: labels are never given markup, and no string is
// used as a format.

#ifndef TETHER_GTK_LINUX_H
#define TETHER_GTK_LINUX_H

#include <gtk/gtk.h>

// The dialog's response ids; GTK_RESPONSE_DELETE_EVENT (Esc, the close
// button, the deadline) means dismissed without an answer.
enum { TETHER_DENY = 1, TETHER_ALWAYS_SITE = 2, TETHER_ALLOW_ONCE = 3 };

// tether_dialog_new builds the dialog, hidden. deadline_ms is Unix ms (0:
// no countdown). Without one_site, "Always allow for this site" is disabled.
GtkWidget *tether_dialog_new(const char *title, const char *heading, long long deadline_ms, int one_site);
// tether_dialog_field adds a labelled value below the heading.
void tether_dialog_field(GtkWidget *dialog, const char *label, const char *value);
// tether_dialog_run shows the dialog, runs the main loop until it has a
// response, destroys it and returns the response id.
int tether_dialog_run(GtkWidget *dialog);

#endif
