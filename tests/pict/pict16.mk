## Pictures and colour (issue 16, part 3): jax.debug.visualize_array_sharding
## checked against JAX's visualize_sharding run with rich, --color, and the
## :comm figure (comm_svg.c).
TESTS += tests/pict/visualize_rich.sh
EXTRA_DIST += tests/pict/visualize_rich.sh tests/pict/kernel_pictures.py tests/pict/jax_visualize.py tests/pict/visualize_cases.txt
PICT16_GOLDEN = tests/golden/pict_visualize_sharding.jxr
GOLDEN_TESTS += $(PICT16_GOLDEN)
TESTS += tests/pict/color.sh
EXTRA_DIST += tests/pict/color.sh tests/pict/color_jaxpr.jxr tests/pict/color_jaxpr.out
TESTS += tests/pict/comm_svg.sh tests/pict/comm_chromium.sh
EXTRA_DIST += tests/pict/comm_svg.sh tests/pict/comm_chromium.sh tests/pict/comm_fig.jxr tests/pict/comm_fig.out \
	tests/pict/comm_svg.grad.svg tests/pict/comm_svg.bwd.svg tests/pict/comm_svg.static.svg
