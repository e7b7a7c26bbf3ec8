"""The signed-in person's account page: their API tokens (made and revoked here) and a link to change the
password. A new token is shown once, in the answer to the form that made it; the page never shows it again."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from workbench.access.tokens import ApiToken, token_create, token_revoke


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for, e.g. 'submit script'.")


def _page(request: HttpRequest, form: TokenForm, new_token: str = "", status: int = 200) -> HttpResponse:
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "workbench/account.html", {"form": form, "tokens": tokens, "new_token": new_token},
                  status=status)


@never_cache
@login_required
def account(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, TokenForm())
    if "revoke" in request.POST:
        token_id = request.POST.get("revoke", "")
        if token_id.isdigit():
            token_revoke(user=request.user, token_id=int(token_id))
        return redirect("account")
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    _, token = token_create(user=request.user, name=form.cleaned_data["name"])
    return _page(request, TokenForm(), new_token=token)
