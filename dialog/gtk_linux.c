//go:build linux && desktop

#include "gtk_linux.h"
#include "_cgo_export.h"

static void set_bold(GtkWidget *label) {
	PangoAttrList *attrs = pango_attr_list_new();
	pango_attr_list_insert(attrs, pango_attr_weight_new(PANGO_WEIGHT_BOLD));
	gtk_label_set_attributes(GTK_LABEL(label), attrs);
	pango_attr_list_unref(attrs);
}

static GtkWidget *text_label(const char *text) {
	GtkWidget *l = gtk_label_new(NULL);
	gtk_label_set_use_markup(GTK_LABEL(l), FALSE);
	gtk_label_set_use_underline(GTK_LABEL(l), FALSE);
	gtk_label_set_text(GTK_LABEL(l), text);
	gtk_label_set_xalign(GTK_LABEL(l), 0);
	gtk_label_set_yalign(GTK_LABEL(l), 0);
	gtk_label_set_line_wrap(GTK_LABEL(l), TRUE);
	gtk_label_set_line_wrap_mode(GTK_LABEL(l), PANGO_WRAP_WORD_CHAR);
	gtk_label_set_max_width_chars(GTK_LABEL(l), 64);
	return l;
}

// tick updates the countdown once a second; past the deadline (the daemon
// has denied the call) it dismisses the dialog.
static gboolean tick(gpointer data) {
	GtkWidget *dialog = data;
	GtkWidget *countdown = g_object_get_data(G_OBJECT(dialog), "tether-countdown");
	long long deadline = *(long long *)g_object_get_data(G_OBJECT(dialog), "tether-deadline");
	char *text = tetherTimeLeft(deadline);
	gtk_label_set_text(GTK_LABEL(countdown), text);
	free(text);
	if (g_get_real_time() / 1000 >= deadline) {
		gtk_dialog_response(GTK_DIALOG(dialog), GTK_RESPONSE_DELETE_EVENT);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

GtkWidget *tether_dialog_new(const char *title, const char *heading, long long deadline_ms, int one_site) {
	GtkWidget *dialog = gtk_dialog_new();
	gtk_window_set_title(GTK_WINDOW(dialog), title);
	gtk_window_set_position(GTK_WINDOW(dialog), GTK_WIN_POS_CENTER);
	gtk_window_set_keep_above(GTK_WINDOW(dialog), TRUE);
	gtk_window_set_urgency_hint(GTK_WINDOW(dialog), TRUE);
	gtk_window_set_resizable(GTK_WINDOW(dialog), FALSE);
	gtk_container_set_border_width(GTK_CONTAINER(dialog), 12);

	GtkWidget *box = gtk_dialog_get_content_area(GTK_DIALOG(dialog));
	gtk_box_set_spacing(GTK_BOX(box), 12);
	GtkWidget *head = text_label(heading);
	set_bold(head);
	gtk_box_pack_start(GTK_BOX(box), head, FALSE, FALSE, 0);

	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_row_spacing(GTK_GRID(grid), 6);
	gtk_grid_set_column_spacing(GTK_GRID(grid), 12);
	gtk_box_pack_start(GTK_BOX(box), grid, FALSE, FALSE, 0);
	g_object_set_data(G_OBJECT(dialog), "tether-grid", grid);

	GtkWidget *countdown = text_label("");
	gtk_box_pack_start(GTK_BOX(box), countdown, FALSE, FALSE, 0);
	g_object_set_data(G_OBJECT(dialog), "tether-countdown", countdown);
	if (deadline_ms > 0) {
		long long *d = g_new(long long, 1);
		*d = deadline_ms;
		g_object_set_data_full(G_OBJECT(dialog), "tether-deadline", d, g_free);
		tick(dialog);
		g_timeout_add_seconds(1, tick, dialog);
	}

	// Deny first and the default: see show in gtk_linux.go.
	GtkWidget *deny = gtk_dialog_add_button(GTK_DIALOG(dialog), "_Deny", TETHER_DENY);
	gtk_dialog_add_button(GTK_DIALOG(dialog), "Al_ways allow for this site", TETHER_ALWAYS_SITE);
	gtk_dialog_add_button(GTK_DIALOG(dialog), "_Allow once", TETHER_ALLOW_ONCE);
	gtk_dialog_set_response_sensitive(GTK_DIALOG(dialog), TETHER_ALWAYS_SITE, one_site);
	gtk_dialog_set_default_response(GTK_DIALOG(dialog), TETHER_DENY);
	g_object_set_data(G_OBJECT(dialog), "tether-deny", deny);
	return dialog;
}

void tether_dialog_field(GtkWidget *dialog, const char *label, const char *value) {
	GtkGrid *grid = g_object_get_data(G_OBJECT(dialog), "tether-grid");
	int row = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(dialog), "tether-rows"));
	GtkWidget *k = text_label(label);
	gtk_style_context_add_class(gtk_widget_get_style_context(k), "dim-label");
	gtk_grid_attach(grid, k, 0, row, 1, 1);
	gtk_grid_attach(grid, text_label(value), 1, row, 1, 1);
	g_object_set_data(G_OBJECT(dialog), "tether-rows", GINT_TO_POINTER(row + 1));
}

static void on_response(GtkDialog *dialog, gint id, gpointer data) {
	*(int *)data = id;
	gtk_main_quit();
}

int tether_dialog_run(GtkWidget *dialog) {
	int response = GTK_RESPONSE_NONE;
	g_object_ref(dialog); // alive until destroyed below, however it was closed
	g_signal_connect(dialog, "response", G_CALLBACK(on_response), &response);
	gtk_widget_show_all(dialog);
	gtk_widget_grab_focus(g_object_get_data(G_OBJECT(dialog), "tether-deny"));
	gtk_window_present(GTK_WINDOW(dialog));
	gtk_main();
	gtk_widget_destroy(dialog);
	g_object_unref(dialog);
	while (gtk_events_pending()) {
		gtk_main_iteration(); // let the window go before the process prints and exits
	}
	return response;
}
