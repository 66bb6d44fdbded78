"""The framework calls every modelled plugin through one shape: FilterPlugin (framework.py), and
the plugins that score through ScorePlugin (scoring.py). mypy checks the profile against them;
these tests check the modules themselves, so a plugin that loses a function fails here too."""

from kubectl_dra.scheduling import framework


def test_every_modelled_plugin_of_the_profile_is_a_filter_plugin():
    assert framework.MODELLED, "the profile models no plugin"
    for plugin in framework.PROFILE:
        if isinstance(plugin, str):
            continue  # a plugin the profile names but we do not model (NotChecked)
        assert isinstance(plugin, framework.FilterPlugin), plugin
        assert isinstance(plugin.NAME, str) and plugin.NAME


def test_every_scorer_has_a_weight_and_a_score():
    for plugin in framework.scorers():
        assert callable(plugin.score) and isinstance(plugin.WEIGHT, int) and plugin.WEIGHT > 0, plugin.NAME


def test_a_module_without_filter_is_not_a_filter_plugin():
    from kubectl_dra.scheduling.plugins import balanced_allocation  # score only: no Filter

    assert not isinstance(balanced_allocation, framework.FilterPlugin)
