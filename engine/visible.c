/*
 * visible.c -- the parts of the visibility step that are not on the per-entry path
 * (the step itself is static inline in visible.h).
 */
#include "visible.h"

#include <stdlib.h>

void
wc_vis_rules_init(wc_vis_rules *rules)
{
	memset(rules, 0, sizeof(*rules));
	rules->mode = WC_VIS_READ;
	rules->trunc = 0;
	rules->snapshot = WC_SEQ_MAX;
	rules->pend_trunc = 0;
	rules->pend_max = WC_SEQ_MAX;
	rules->max_versions = 0;
	rules->ttl_cutoff = INT64_MIN;
	rules->ts_min = INT64_MIN;
	rules->ts_max = INT64_MAX;
	rules->quals = NULL;
	rules->nquals = 0;
	rules->qual_prefixes = NULL;
	rules->nqual_prefixes = 0;
}

void
wc_vis_init(wc_vis *vis, const wc_vis_rules *rules)
{
	memset(vis, 0, sizeof(*vis));
	vis->rules = *rules;
}

void
wc_vis_free(wc_vis *vis)
{
	wc_vis_rules rules = vis->rules;

	free(vis->row);
	free(vis->qual);
	wc_vis_init(vis, &rules);
}
