// The default VitePress theme, plus the styles of the build-time diagrams (mermaid.ts).
import DefaultTheme from 'vitepress/theme';
import './diagrams.css';

export default DefaultTheme;
