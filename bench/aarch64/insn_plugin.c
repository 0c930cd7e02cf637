/*
 * A qemu TCG plugin that counts the guest instructions a program executes,
 * for insn-count.sh: at each translation block's translation it adds an
 * inline "count += instructions in this block" to the block's execution,
 * and at exit prints the total to stderr as "insn-count: N". A block left
 * early by an exception is still counted whole; a seal loop takes none.
 * Single-threaded guests only: the inline add is not atomic.
 *
 * Built against the qemu-plugin.h of the qemu that runs it (its source
 * package, fetched by insn-count.sh): the plugin API is versioned.
 */
#include <inttypes.h>
#include <stdio.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t count;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &count,
						 qemu_plugin_tb_n_insns(tb));
}

static void on_exit_report(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	fprintf(stderr, "insn-count: %" PRIu64 "\n", count);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	(void)argc;
	(void)argv;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_report, NULL);
	return 0;
}
