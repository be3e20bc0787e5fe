## rem32.mk: JAX's tests/api_test.py classes RematTest and Remat3Test, the
## cases the earlier ports (remat15, remat28, api19, api32) left:
## remat's partial evaluation of a scan whose operands are all known
## (test_remat_of_scan_funky_custom_jvp2, rem32_scan); the nested conds of
## test_remat_of_cond_funky_custom_jvp{,2} are in remat28_control.
## Not ported: HLO text (test_no_cse_widget_on_primals,
## test_no_cse_widget_with_prevent_cse_false,
## test_remat_partial_cse_prevention_pytree_prefix_forms,
## test_remat_computed_residuals_cse_prevention,
## test_remat_cse_prevention_no_cotangents_flag: optimization barriers in
## as_text), compile and cache counts (test_linearize_caching,
## test_vjp_caching, test_vjp_caching_static_argnums, test_fwd_caching,
## test_fwd_caching_static_argnums), and remat3's internals
## (test_custom_vjp_with_checkpoint_name_in_fwd_static_argnums's
## .lojax and custom_vjp3, test_remat_dce_input_to_output_forwarding's
## ad_checkpoint.dce, test_remat_eqn_dce's call_hi_primitive,
## test_remat_expand_stages_call_without_inlining{,_high_jaxpr}'s
## pe.lower_jaxpr2), included by golden.mk.
GOLDEN_TESTS += \
	tests/golden/rem32_scan.jxr
## what JAX's tests assert that shardrepl does not do yet (golden-pending)
GOLDEN_PENDING +=
