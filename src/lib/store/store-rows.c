/* store-rows.c — what store-rows.h declares: the names of row fields the
 * store keeps as text, and the frees of what it allocates. */
#include "store-rows.h"

#include <sodium.h>
#include <stdlib.h>

const char *cd_temp_kind_name(enum cd_temp_kind k)
{
	switch (k) {
	case CD_TEMP_BREAK_GLASS:
		return "break-glass";
	case CD_TEMP_DELEGATED:
		return "delegated";
	}
	return "?";
}

const char *cd_prop_op_name(enum cd_prop_op op)
{
	switch (op) {
	case CD_PROP_ADDED:
		return "added";
	case CD_PROP_MODIFIED:
		return "modified";
	case CD_PROP_DELETED:
		return "deleted";
	case CD_PROP_REFUSED:
		return "refused";
	case CD_PROP_MKDIR:
		return "mkdir";
	case CD_PROP_RMDIR:
		return "rmdir";
	}
	return "?";
}

void cd_prop_file_release(struct cd_prop_file *f)
{
	free(f->path);
	free(f->note);
	free(f->diff);
}

void cd_proposal_free(struct cd_proposal *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nfiles; i++)
		cd_prop_file_release(&p->files[i]);
	free(p->files);
	free(p->agent);
	free(p->task);
	free(p->tree);
	free(p->upper);
	free(p->decided_by);
	free(p->branch);
	free(p->commit);
	sodium_memzero(p->mac_key, sizeof p->mac_key);
	free(p);
}

void cd_proposal_list_free(struct cd_proposal *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].agent);
		free(v[i].task);
		free(v[i].tree);
		free(v[i].upper);
		free(v[i].decided_by);
		free(v[i].branch);
		free(v[i].commit);
	}
	free(v);
}
