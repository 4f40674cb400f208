// "Copy" buttons for code snippets: a button with data-copy="<id>" copies the text of element <id>.
(() => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      const target = document.getElementById(button.dataset.copy ?? '');
      if (!target) return;
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(target.textContent ?? '');
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Select and copy';
      }
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    });
  }
})();
