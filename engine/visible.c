/*
 * visible.c -- the parts of the visibility step that are not on the per-entry path
 * (the step itself is static inline in visible.h).
 */
#include "visible.h"

#include <stdlib.h>

void
wc_vis_rules_init(wc_vis_rules *rules)
{
	/* the fields not named are 0 or NULL: no truncate point, every version, every
	 * column */
	*rules = (wc_vis_rules) {
		.mode = WC_VIS_READ,
		.snapshot = WC_SEQ_MAX,
		.keep_above = WC_SEQ_MAX,
		.pend_max = WC_SEQ_MAX,
		.ttl_cutoff = INT64_MIN,
		.ts_min = INT64_MIN,
		.ts_max = INT64_MAX,
	};
}

void
wc_vis_init(wc_vis *vis, const wc_vis_rules *rules)
{
	*vis = (wc_vis) {.rules = *rules};
}

void
wc_vis_free(wc_vis *vis)
{
	free(vis->row);
	free(vis->qual);
	vis->row = vis->qual = NULL;
	vis->row_cap = vis->qual_cap = 0;
	wc_vis_reset(vis);
}
