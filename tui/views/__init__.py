"""The dashboard's tabs, in the order of their number keys."""

from tui.views.base import View
from tui.views.claims import ClaimsView
from tui.views.devices import DevicesView
from tui.views.doctor import DoctorView
from tui.views.nodes import NodesView
from tui.views.pools import PoolsView
from tui.views.taints import TaintsView

VIEWS: tuple[type[View], ...] = (PoolsView, DevicesView, ClaimsView, NodesView, TaintsView, DoctorView)
